// Kassa store console: plain JavaScript, no build step, nothing loaded from
// anywhere but the edge that serves it.
//
// After a manager or owner logs in (the token pair stays in sessionStorage,
// so it ends with the tab), the page polls GET /api/v1/sync/status every
// 2 s and shows the state of the store's link to the hub in a large banner:
// green only when the edge says in_sync (nothing waiting, the last digest
// comparison agreed, nothing refused), red while the hub refuses changes
// of the store (listed as sentences under the banner) or the store's data
// differs from the hub's, amber while changes wait in either direction or
// the first comparison is under way, red while the link is down (sales
// keep being saved and go up later). When the
// edge itself does not answer, the banner says so and polling goes on until
// it answers again. Below: changes waiting, last verification, last error
// and the most recent sync conflicts (GET /api/v1/sync/conflicts); then the
// store's day: today's takings and refunds, the open drawers and who opened
// them, and the last Z report.
(function () {
  'use strict';

  var API = '/api/v1';
  var AUTH_KEY = 'kassa.console.auth';
  var POLL_MS = 2000;
  var TIMEOUT_MS = 5000; // a request that takes longer counts as no answer
  var CONFLICTS = 20;

  var state = {
    timer: 0,
    gen: 0, // bumped on login and logout, so a late answer of an old session is dropped
    offset: 0, // the edge's clock minus ours, ms (from the Date header)
    lastAnswer: null,
    last: null // the last status shown
  };

  var $ = function (id) { return document.getElementById(id); };
  // time, clock, ago, json and cell come from format.js, on the server's clock.
  var fmt = KassaFormat(now);
  var time = fmt.time, ago = fmt.ago, json = fmt.json, cell = fmt.cell;
  function clock(t) { return fmt.clock(t, true); }

  // --- auth (session.js) ---------------------------------------------------

  // A 502-504 from a proxy counts as no answer, like a timeout.
  var session = new KassaSession({
    api: API, storageKey: AUTH_KEY, timeoutMs: TIMEOUT_MS, unreachable: 'edge not answering', gatewayDown: true,
    onResponse: function (r) {
      var date = Date.parse(r.headers.get('Date') || '');
      if (!isNaN(date)) state.offset = date - Date.now();
    }
  });

  function api(path) { return session.api('GET', path); }
  // The reports section (reports.js) reads through the same session.
  window.KassaConsole = { api: api, session: session };

  function showLogin(message) {
    clearTimeout(state.timer);
    state.gen++;
    $('console').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    $('password').value = '';
    $('email').focus();
  }

  function logout(tell) {
    if (tell) session.logout(); else session.clear();
    state.last = null;
    showLogin('');
  }

  session.loginForm(start, function (e) {
    return e.unreachable ? 'Edge not answering: check that it is running, then try again.' :
      e.status === 401 ? 'Wrong e-mail or password.' : e.message;
  });

  $('logout').addEventListener('click', function () { logout(true); });

  // --- polling ------------------------------------------------------------

  function start() {
    clearTimeout(state.timer);
    state.gen++;
    $('login').hidden = true;
    $('console').hidden = false;
    poll();
  }

  function poll() {
    clearTimeout(state.timer);
    var gen = state.gen;
    api('/sync/status').then(function (j) {
      if (gen !== state.gen) return null;
      state.lastAnswer = now();
      renderStatus(j.data);
      // Conflicts and the day are extra: their failure leaves the last
      // figures in place.
      return Promise.all([
        api('/sync/conflicts?limit=' + CONFLICTS).then(function (c) {
          if (gen === state.gen) renderConflicts(c.data || []);
        }, function () {}),
        day().then(function (d) {
          if (gen === state.gen) renderDay(d);
        }, function () {})
      ]);
    }).catch(function (e) {
      if (gen !== state.gen) return;
      if (e.unreachable) {
        renderUnreachable();
      } else if (e.status === 401) {
        session.clear();
        showLogin(e.message);
      } else if (e.status === 403) {
        session.clear();
        showLogin('This account cannot see the sync status: log in as a manager or owner.');
      } else {
        renderError(e.message);
      }
    }).then(function () {
      if (gen === state.gen) state.timer = setTimeout(poll, POLL_MS);
    });
  }

  // --- rendering ----------------------------------------------------------

  function now() { return Date.now() + state.offset; }

  function changes(n) { return n + (n === 1 ? ' change' : ' changes'); }

  function banner(kind, text, sub) {
    var el = $('status');
    el.className = 'status ' + kind;
    el.dataset.state = kind;
    var t = $('status-text');
    t.textContent = text;
    if (sub) {
      var s = document.createElement('span');
      s.className = 'sub';
      s.textContent = sub;
      t.appendChild(s);
    }
  }

  function renderStatus(st) {
    state.last = st;
    var up = Number(st.pending_up) || 0, down = Number(st.pending_down) || 0;
    var since = time(st.since);
    var el = $('status');
    el.dataset.pendingUp = String(up);
    el.dataset.pendingDown = String(down);
    var refused = Number(st.refused_count) || 0;
    var differ = st.verify_ok === false ? (st.verify_differ || []).join(', ') || 'some tables' : '';
    var connected = since ? 'Connected since ' + clock(since) + '. ' : '';
    el.dataset.refused = String(refused);
    if (!st.connected) {
      var text = (since ? 'OFFLINE since ' + clock(since) : 'OFFLINE — no link to the hub yet') +
        ' — sales are saved and will sync when the link returns (' + changes(up) + ' waiting)';
      banner('offline', text, (since ? 'Offline for ' + ago(since) + '.' : '') +
        (refused ? ' The hub refused ' + changes(refused) + ' of this store (below).' : ''));
    } else if (refused > 0) {
      banner('refused', 'Online — NOT in sync: the hub refused ' + changes(refused) + ' of this store',
        connected + 'They are not at head office until ops re-apply or resolve them (listed below).');
    } else if (differ) {
      banner('differs', 'Online — NOT in sync: this store\'s data differs from the hub\'s (' + differ + ')',
        connected + 'Repairing from the hub\'s log; if it stays, tell head office.');
    } else if (up > 0 || down > 0) {
      banner('behind', 'Online — catching up (' + changes(up) + ' to send, ' + down + ' to receive)', connected);
    } else if (st.in_sync) {
      banner('ok', 'Online — in sync', connected + 'Checked with the hub.');
    } else {
      banner('behind', 'Online — nothing waiting; checking with the hub', connected);
    }
    renderRefusals(st.refused || [], refused);
    $('node').textContent = (st.node || 'edge') + ' ' + (st.node_id || '');
    $('pending-up').textContent = String(up);
    $('pending-down').textContent = String(down);
    var verified = time(st.last_verified);
    $('last-verified').textContent = verified ? clock(verified) + ' (' + ago(verified) + ' ago)' : 'never';
    var err = $('last-error');
    err.textContent = st.last_error || 'none';
    err.className = st.last_error ? 'bad' : '';
    $('checked').textContent = clock(state.lastAnswer);
  }

  // renderRefusals lists the store's changes the hub refused, as sentences.
  function renderRefusals(list, total) {
    $('refusals').hidden = total === 0;
    $('n-refused').textContent = total > list.length ? list.length + ' newest of ' + total : String(total);
    var ul = $('refusal-rows');
    ul.textContent = '';
    list.forEach(function (r) {
      var li = document.createElement('li');
      li.dataset.change = r.change_id || '';
      li.dataset.reason = r.reason || '';
      var at = time(r.refused_at);
      var when = document.createElement('span');
      when.className = 'when';
      when.textContent = at ? clock(at) : '';
      li.appendChild(when);
      li.appendChild(document.createTextNode(' ' + (r.summary || r.error || '')));
      li.title = r.error || '';
      ul.appendChild(li);
    });
  }

  function renderUnreachable() {
    var sub = 'Retrying every ' + POLL_MS / 1000 + ' s.';
    if (state.lastAnswer) sub += ' Last answer at ' + clock(state.lastAnswer) + ' (' + ago(state.lastAnswer) + ' ago); the figures below are from then.';
    banner('unreachable', 'Edge not answering', sub);
  }

  function renderError(msg) {
    banner('unreachable', 'Cannot read the sync status', msg + ' — retrying every ' + POLL_MS / 1000 + ' s.');
  }

  function renderConflicts(list) {
    var body = $('conflict-rows');
    var rows = list.slice().sort(function (a, b) {
      return (time(b.detected_at) || 0) - (time(a.detected_at) || 0);
    });
    body.textContent = '';
    if (!rows.length) {
      var tr = document.createElement('tr');
      tr.className = 'none';
      cell(tr, 'No conflicts.').colSpan = 5;
      body.appendChild(tr);
      return;
    }
    rows.forEach(function (c) {
      var tr = document.createElement('tr');
      tr.dataset.id = c.id || '';
      var at = time(c.detected_at);
      cell(tr, at ? clock(at) : '');
      cell(tr, (c.kind || '').replace(/_/g, ' '), 'kind');
      cell(tr, c.summary || c.subject || (c.entity || '') + ' ' + (c.entity_id || '')).title = (c.entity || '') + ' ' + (c.entity_id || '');
      cell(tr, json(c.local), '', true).title = JSON.stringify(c.local);
      cell(tr, json(c.remote), '', true).title = JSON.stringify(c.remote);
      body.appendChild(tr);
    });
  }

  // --- the store's day (docs/drawers.md) -----------------------------------

  // day reads today's takings (the payments' settlement of each
  // location's local today), the open drawers, the last Z report and each
  // register's receipt printer (a register without one answers 404).
  function day() {
    return Promise.all([
      api('/payments/settlements'),
      api('/drawers?status=open&limit=200'),
      api('/z-reports?limit=200'),
      api('/registers?limit=200')
    ]).then(function (r) {
      var d = { settlements: r[0].data || [], open: r[1].data || [], zs: r[2].data || [], registers: r[3].data || [] };
      return Promise.all(d.registers.map(function (reg) {
        return api('/registers/' + reg.id + '/printer').then(function (x) { return x.data; }, function () { return null; });
      })).then(function (ps) {
        d.printers = ps.filter(Boolean);
        return d;
      });
    });
  }

  // renderPrinters lists the tills' printers: whether the last print went
  // through (and when) or failed (and why), and the prints waiting.
  function renderPrinters(d, names) {
    var body = $('printer-rows');
    body.textContent = '';
    if (!d.printers.length) {
      var none = document.createElement('tr');
      none.className = 'none';
      cell(none, 'No printer is set.').colSpan = 4;
      body.appendChild(none);
    }
    d.printers.forEach(function (p) {
      var tr = document.createElement('tr');
      tr.dataset.register = p.register_id;
      tr.dataset.status = p.status;
      cell(tr, names[p.register_id] || p.register_id);
      cell(tr, p.host + ':' + p.port + (p.enabled ? '' : ' (off)'));
      var ok = time(p.last_ok_at);
      var last = cell(tr, p.status === 'ok' ? 'ok' + (ok ? ' at ' + clock(ok) : '') :
        p.status === 'unreachable' ? 'failed' : 'not used yet', p.status === 'unreachable' ? 'short' : '');
      if (p.last_error) {
        var why = document.createElement('small');
        why.textContent = ' ' + p.last_error;
        last.appendChild(why);
      }
      cell(tr, String(p.pending));
      body.appendChild(tr);
    });
  }

  // money shows minor units as major units with two decimals (the
  // currencies a store runs in here; a count by denomination is the API's).
  function money(minor, currency) {
    var n = Number(minor) || 0;
    var s = (Math.abs(n) / 100).toFixed(2);
    return (n < 0 ? '−' : '') + (currency ? currency + ' ' : '') + s;
  }

  function renderDay(d) {
    var today = '';
    d.settlements.forEach(function (s) { if (s.date > today) today = s.date; });
    var sales = 0, count = 0, refunds = 0;
    d.settlements.forEach(function (s) {
      if (s.date !== today) return;
      sales += Number(s.gross) || 0;
      count += Number(s.count) || 0;
      refunds += Number(s.refunds) || 0;
    });
    $('day-date').textContent = today ? '(' + today + ')' : '';
    $('day-sales').textContent = money(sales) + ' (' + count + (count === 1 ? ' payment)' : ' payments)');
    $('day-refunds').textContent = money(refunds);
    $('day-net').textContent = money(sales - refunds);
    var names = {};
    d.registers.forEach(function (r) { names[r.id] = r.name; });
    renderPrinters(d, names);
    var body = $('drawer-rows');
    body.textContent = '';
    if (!d.open.length) {
      var none = document.createElement('tr');
      none.className = 'none';
      cell(none, 'No drawer is open.').colSpan = 4;
      body.appendChild(none);
    }
    d.open.forEach(function (x) {
      var tr = document.createElement('tr');
      tr.dataset.id = x.id;
      cell(tr, names[x.register_id] || x.register_id);
      cell(tr, x.opened_by_name || x.opened_by, 'who');
      var at = time(x.opened_at);
      cell(tr, at ? clock(at) : '');
      cell(tr, money(x.float, x.currency));
      body.appendChild(tr);
    });
    var last = null;
    d.zs.forEach(function (z) { if (!last || z.closed_at > last.closed_at) last = z; });
    var p = $('last-z');
    p.textContent = '';
    p.className = last ? '' : 'none';
    if (!last) { p.textContent = 'No Z report yet.'; return; }
    p.dataset.number = String(last.number);
    p.appendChild(document.createTextNode('Z ' + last.number + ' · ' + (names[last.register_id] || last.register_id) +
      ' · business day ' + last.business_day + ' · expected ' + money(last.expected, last.currency) +
      ', counted ' + money(last.counted, last.currency) + ' · '));
    var diff = document.createElement('span');
    diff.id = 'last-z-diff';
    diff.className = last.over_short < 0 ? 'short' : last.over_short > 0 ? 'over' : '';
    diff.textContent = last.over_short < 0 ? 'short ' + money(-last.over_short, last.currency) :
      last.over_short > 0 ? 'over ' + money(last.over_short, last.currency) : 'balanced';
    p.appendChild(diff);
    if (last.note) p.appendChild(document.createTextNode(' — ' + last.note));
  }

  // --- start --------------------------------------------------------------

  if (session.auth) start(); else showLogin('');
})();
