// Kassa ops monitor: plain JavaScript, no build step, nothing loaded from
// anywhere but the hub that serves it.
//
// After an owner or an ops user logs in (the token pair stays in
// sessionStorage, so it ends with the tab), the page opens the hub's feed
// GET /api/v1/sync/ws (a WebSocket; the token goes in the first message)
// and keeps one table row per edge: a snapshot first, then diffs of the
// rows that changed, at most about once a second, and heartbeats. Rows are
// built once and only changed cells are written; the order (worst store
// first) is fixed up by moving the rows that are out of place. Figures an
// edge reports (changes waiting, lag) carry "as of" and their age, so they
// never look current while its link is cut; when the feed itself is lost,
// the table is dimmed and says since when, and the page reconnects.
// The conflicts panel names rows as people do (order numbers, not ids) and
// says what happened in a sentence (the conflict's subject and summary);
// it resolves (with a note), re-applies quarantined records, or resolves
// them by taking the store's or the hub's version (with a note) through
// the REST routes, and shows their errors in the row.
(function () {
  'use strict';

  var API = '/api/v1';
  var AUTH_KEY = 'kassa.ops.auth';
  var TIMEOUT_MS = 8000;
  var QUIET_MS = 5000; // no message for this long: the feed is late
  var AGE_MS = 5000; // how often ages are rewritten

  var state = {
    gen: 0, // bumped on login and logout: late answers of an old session are dropped
    ws: null,
    retry: 0,
    retryTimer: 0,
    offset: 0, // the hub's clock minus ours, ms (from as_of)
    lastMessage: 0, // our clock, ms
    asOf: null,
    live: false,
    edges: {}, // node id -> {e, tr, cells, key}
    conflicts: {}, // id -> {c, tr}
    names: {} // location id -> name
  };

  var $ = function (id) { return document.getElementById(id); };
  // time, clock, ago, json and cell come from format.js, on the server's clock.
  var fmt = KassaFormat(now);
  var time = fmt.time, ago = fmt.ago, json = fmt.json, cell = fmt.cell;
  var clock = fmt.clock;

  // --- auth and REST (session.js) -----------------------------------------

  var session = new KassaSession({
    api: API, storageKey: AUTH_KEY, timeoutMs: TIMEOUT_MS, unreachable: 'The hub is not answering.',
    onEnded: function (e) { showLogin(e.message); }
  });

  function api(method, path, body) { return session.api(method, path, body); }

  function showLogin(message) {
    state.gen++;
    closeFeed();
    $('ops').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    $('password').value = '';
    $('email').focus();
  }

  session.loginForm(start, function (e) {
    return e.status === 401 ? 'Wrong e-mail or password.' : e.message;
  });

  $('logout').addEventListener('click', function () {
    session.logout();
    showLogin('');
  });

  function pageError(msg) {
    var el = $('page-error');
    el.textContent = msg || '';
    el.hidden = !msg;
  }

  // --- the feed -------------------------------------------------------------

  function start() {
    state.started = performance.now();
    state.gen++;
    $('login').hidden = true;
    $('ops').hidden = false;
    pageError('');
    loadNames(state.gen);
    connect();
  }

  function closeFeed() {
    clearTimeout(state.retryTimer);
    if (state.ws) {
      state.ws.onclose = state.ws.onmessage = state.ws.onerror = null;
      state.ws.close();
      state.ws = null;
    }
  }

  function connect() {
    closeFeed();
    var gen = state.gen, got = false;
    var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + API + '/sync/ws');
    state.ws = ws;
    feedState('connecting', 'Connecting…');
    ws.onopen = function () {
      ws.send(JSON.stringify({ type: 'auth', access_token: session.auth ? session.auth.accessToken : '' }));
    };
    ws.onmessage = function (ev) {
      if (gen !== state.gen) return;
      var m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      if (m.type === 'snapshot') document.body.dataset.snapshotBytes = String(ev.data.length);
      if (m.type === 'error') { pageError(m.detail || m.title || 'The feed refused: ' + ev.data); return; }
      got = true;
      state.retry = 0;
      receive(m);
    };
    ws.onclose = function (ev) {
      if (gen !== state.gen || state.ws !== ws) return;
      state.ws = null;
      lost(ev);
      if (ev.code === 4403) { // the account lacks reports:read: reconnecting will not help
        pageError('This account cannot watch the stores: log in as an owner or with the ops role.');
        feedState('lost', 'Not allowed');
        return;
      }
      // 4401, or closed before a single message: most likely the token.
      // Refresh it once, then reconnect; a refused refresh ends the session.
      var next = got && ev.code !== 4401 ? Promise.resolve() : session.refresh();
      next.then(function () {
        if (gen !== state.gen) return;
        var wait = Math.min(10000, 500 * Math.pow(2, state.retry++));
        state.retryTimer = setTimeout(connect, wait);
      }, function (e) {
        if (gen !== state.gen) return;
        if (e.ended) return; // session.onEnded showed the login
        state.retryTimer = setTimeout(connect, 5000);
      });
    };
  }

  function lost(ev) {
    state.live = false;
    document.body.classList.add('feed-lost');
    var why = ev && ev.reason ? ' (' + ev.reason + ')' : '';
    feedState('lost', 'Feed lost' + why + (state.asOf ? ': figures as of ' + clock(state.asOf) : '') + ' — reconnecting…');
  }

  function feedState(s, text) {
    var el = $('feed');
    el.dataset.state = s;
    el.textContent = text;
  }

  function receive(m) {
    var asOf = time(m.as_of);
    if (asOf) {
      state.offset = asOf - Date.now();
      state.asOf = asOf;
    }
    state.lastMessage = Date.now();
    state.live = true;
    document.body.classList.remove('feed-lost');
    feedState('live', 'Live · as of ' + (asOf ? clock(asOf) : '–'));
    if (m.type === 'snapshot') {
      var t0 = performance.now();
      snapshot(m);
      counts();
      // How long the rows took, and the page from sign-in to them (figures for docs/arch-ops-page.md).
      document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
      if (!document.body.dataset.firstMs) document.body.dataset.firstMs = String(Math.round(performance.now() - state.started));
    } else if (m.type === 'diff') {
      (m.edges || []).forEach(upsertEdge);
      (m.removed_edges || []).forEach(removeEdge);
      (m.conflicts || []).forEach(addConflict);
      (m.resolved || []).forEach(removeConflict);
      if ((m.edges || []).length || (m.removed_edges || []).length) sortRows();
      if ((m.conflicts || []).length || (m.resolved || []).length) conflictsChanged();
    }
    counts();
  }

  function snapshot(m) {
    var seen = {};
    (m.edges || []).forEach(function (e) { seen[e.node_id] = true; upsertEdge(e); });
    Object.keys(state.edges).forEach(function (id) { if (!seen[id]) removeEdge(id); });
    var open = {};
    (m.conflicts || []).forEach(function (c) { open[c.id] = true; addConflict(c); });
    Object.keys(state.conflicts).forEach(function (id) { if (!open[id]) removeConflict(id); });
    sortRows();
    conflictsChanged();
    $('no-edges').hidden = (m.edges || []).length > 0;
  }

  // The feed can be quiet for a while only if the hub is: say so.
  setInterval(function () {
    if (!state.live || !state.lastMessage) return;
    var quiet = Date.now() - state.lastMessage;
    if (quiet > QUIET_MS) feedState('late', 'No news from the hub for ' + Math.round(quiet / 1000) + ' s · as of ' + clock(state.asOf));
  }, 1000);

  // --- names ----------------------------------------------------------------

  // loadNames reads the locations' names (owners can; an ops user without
  // locations:read sees ids, which is fine).
  function loadNames(gen, cursor) {
    api('GET', '/locations?limit=100' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')).then(function (j) {
      if (gen !== state.gen) return;
      (j.data || []).forEach(function (l) { state.names[l.id] = l.name; });
      Object.keys(state.edges).forEach(function (id) { renderEdge(state.edges[id]); });
      Object.keys(state.conflicts).forEach(function (id) { renderConflictStore(state.conflicts[id]); });
      applyFilter();
      if (j.next_cursor) loadNames(gen, j.next_cursor);
    }, function () {});
  }

  function storeName(locationID) { return state.names[locationID] || locationID || ''; }

  // --- edge rows ------------------------------------------------------------

  var COLS = 8;

  function upsertEdge(e) {
    var r = state.edges[e.node_id];
    if (!r) {
      var tr = document.createElement('tr');
      tr.dataset.node = e.node_id;
      var cells = [];
      for (var i = 0; i < COLS; i++) {
        var td = document.createElement('td');
        var main = document.createElement('span');
        var sub = document.createElement('small');
        td.appendChild(main);
        td.appendChild(sub);
        tr.appendChild(td);
        cells.push({ td: td, main: main, sub: sub });
      }
      r = state.edges[e.node_id] = { tr: tr, cells: cells };
    }
    r.e = e;
    r.key = rank(e);
    renderEdge(r);
    filterRow(r);
  }

  function removeEdge(id) {
    var r = state.edges[id];
    if (!r) return;
    if (r.tr.parentNode) r.tr.parentNode.removeChild(r.tr);
    delete state.edges[id];
  }

  // rank orders the worst store first: disconnected, failed verification,
  // quarantined records, open conflicts, changes waiting, lag; then by
  // node id, so equals keep their places.
  function rank(e) {
    return [e.connected ? 1 : 0, e.verify_ok === false ? 0 : 1, e.quarantined > 0 ? 0 : 1,
      e.open_conflicts > 0 ? 0 : 1, -((e.pending_up || 0) + (e.pending_down || 0)), -(e.lag_p99 || 0), e.node_id];
  }

  function compare(a, b) {
    for (var i = 0; i < a.key.length; i++) {
      if (a.key[i] < b.key[i]) return -1;
      if (a.key[i] > b.key[i]) return 1;
    }
    return 0;
  }

  // sortRows puts the rows in rank order, moving only those out of place.
  function sortRows() {
    var body = $('edge-rows');
    var rows = Object.keys(state.edges).map(function (id) { return state.edges[id]; }).sort(compare);
    var at = body.firstChild;
    rows.forEach(function (r) {
      if (r.tr === at) { at = at.nextSibling; return; }
      body.insertBefore(r.tr, at);
    });
  }

  function set(cell, main, sub, cls) {
    if (cell.main.textContent !== main) cell.main.textContent = main;
    if (cell.sub.textContent !== (sub || '')) cell.sub.textContent = sub || '';
    if (cell.td.className !== (cls || '')) cell.td.className = cls || '';
  }

  function renderEdge(r) {
    var e = r.e, c = r.cells;
    var cls = e.connected ? 'up' : 'down';
    if (r.tr.className !== cls) r.tr.className = cls;
    r.tr.dataset.state = cls;
    set(c[0], storeName(e.location_id), e.node_id);
    var since = time(e.connected_since) || (e.connected ? null : time(e.last_seen));
    var at = e.hub ? (e.connected ? 'at ' : 'last at ') + e.hub : '';
    set(c[1], e.connected ? 'Connected' : 'Disconnected',
      (since ? 'since ' + clock(since) + ' (' + ago(since) + ')' : '') + (since && at ? ' · ' : '') + at);
    var seen = time(e.last_seen);
    set(c[2], seen ? clock(seen) : 'never', seen ? ago(seen) + ' ago' : '', e.connected ? '' : 'bad');
    set(c[3], e.version || 'unknown', e.version ? '' : 'older than v0.6.0');
    var reported = time(e.reported_at) || seen;
    var asOf = reported ? 'as of ' + clock(reported) + ' (' + ago(reported) + ' ago)' : 'never reported';
    set(c[4], time(e.reported_at) ? secs(e.lag_p50) + ' / ' + secs(e.lag_p99) : '–', time(e.reported_at) ? asOf : '', e.connected ? '' : 'stale');
    var backlog = (e.pending_up || 0) + (e.pending_down || 0);
    set(c[5], '↑ ' + (e.pending_up || 0) + ' / ↓ ' + (e.pending_down || 0), asOf, !e.connected ? 'stale' : backlog > 0 ? 'warn' : '');
    var verified = time(e.last_verified);
    if (e.verify_ok === false) {
      set(c[6], 'DIFFERS' + (e.verify_differ && e.verify_differ.length ? ': ' + e.verify_differ.join(', ') : ''),
        verified ? clock(verified) + ' (' + ago(verified) + ' ago)' : '', 'bad');
    } else {
      set(c[6], verified ? (e.verify_ok ? 'OK' : 'verified') : 'never', verified ? clock(verified) + ' (' + ago(verified) + ' ago)' : '');
    }
    var open = e.open_conflicts || 0, q = e.quarantined || 0;
    set(c[7], open ? open + ' open' : 'none', q ? q + ' refused (quarantined)' : '', q ? 'bad' : open ? 'warn' : '');
    r.text = (storeName(e.location_id) + ' ' + e.location_id + ' ' + e.node_id + ' ' + (e.version || '') + ' ' + (e.hub || '') + ' ' +
      (e.connected ? 'connected' : 'disconnected')).toLowerCase();
  }

  // Ages move on without messages: rewrite them now and then (only the
  // cells whose text changed are touched).
  setInterval(function () {
    Object.keys(state.edges).forEach(function (id) { renderEdge(state.edges[id]); });
  }, AGE_MS);

  function counts() {
    var up = 0, down = 0, conflicted = 0;
    Object.keys(state.edges).forEach(function (id) {
      var e = state.edges[id].e;
      if (e.connected) up++; else down++;
      if ((e.open_conflicts || 0) > 0) conflicted++;
    });
    $('n-connected').textContent = up;
    $('n-disconnected').textContent = down;
    $('n-conflicted').textContent = conflicted;
    shown();
  }

  // --- filter -----------------------------------------------------------------

  var filterText = '';

  function filterRow(r) {
    var hide = filterText !== '' && r.text.indexOf(filterText) < 0;
    if (r.tr.hidden !== hide) r.tr.hidden = hide;
  }

  function applyFilter() {
    Object.keys(state.edges).forEach(function (id) { filterRow(state.edges[id]); });
    shown();
  }

  function shown() {
    var all = Object.keys(state.edges), n = 0;
    all.forEach(function (id) { if (!state.edges[id].tr.hidden) n++; });
    $('shown').textContent = filterText ? n + ' of ' + all.length + ' shown' : all.length + ' stores';
  }

  $('filter').addEventListener('input', function () {
    filterText = this.value.trim().toLowerCase();
    applyFilter();
  });

  // --- conflicts --------------------------------------------------------------

  function addConflict(c) {
    if (state.conflicts[c.id]) return;
    var tr = document.createElement('tr');
    tr.dataset.id = c.id;
    tr.dataset.kind = c.kind;
    var at = time(c.detected_at);
    cell(tr, at ? clock(at) : '');
    var store = cell(tr, '');
    cell(tr, (c.kind || '').replace(/_/g, ' '), 'kind');
    var what = cell(tr, c.summary || c.subject || (c.entity || '') + ' ' + (c.entity_id || ''), 'what');
    what.title = (c.entity || '') + ' ' + (c.entity_id || '');
    cell(tr, json(c.local), '', true).title = JSON.stringify(c.local);
    cell(tr, json(c.remote), '', true).title = JSON.stringify(c.remote);
    var act = cell(tr, '', 'actions');
    var resolve = button('Resolve', 'resolve');
    act.appendChild(resolve);
    if (c.kind === 'quarantined') {
      act.appendChild(button('Re-apply', 'reapply'));
      act.appendChild(button('Take store\'s', 'quiet take-edge'));
      act.appendChild(button('Take hub\'s', 'quiet take-hub'));
    }
    var err = document.createElement('span');
    err.className = 'row-error';
    err.setAttribute('role', 'alert');
    act.appendChild(err);
    var r = state.conflicts[c.id] = { c: c, tr: tr, store: store, err: err, act: act };
    renderConflictStore(r);
    resolve.addEventListener('click', function () { askNote(r, ''); });
    var re = act.querySelector('button.reapply');
    if (re) re.addEventListener('click', function () { reapply(r, re); });
    ['edge', 'hub'].forEach(function (take) {
      var b = act.querySelector('button.take-' + take);
      if (b) b.addEventListener('click', function () { askNote(r, take); });
    });
  }

  function renderConflictStore(r) {
    r.store.textContent = r.c.location_id ? storeName(r.c.location_id) : 'org-wide';
  }

  function removeConflict(id) {
    var r = state.conflicts[id];
    if (!r) return;
    if (r.tr.parentNode) r.tr.parentNode.removeChild(r.tr);
    delete state.conflicts[id];
  }

  // conflictsChanged shows the open conflicts newest first.
  function conflictsChanged() {
    var body = $('conflict-rows');
    var rows = Object.keys(state.conflicts).map(function (id) { return state.conflicts[id]; });
    rows.sort(function (a, b) { return (time(b.c.detected_at) || 0) - (time(a.c.detected_at) || 0) || (a.c.id < b.c.id ? -1 : 1); });
    var at = body.firstChild;
    rows.forEach(function (r) {
      if (r.tr === at) { at = at.nextSibling; return; }
      body.insertBefore(r.tr, at);
    });
    $('no-conflicts').hidden = rows.length > 0;
    $('n-open').textContent = rows.length ? '(' + rows.length + ')' : '';
  }

  function button(text, cls) {
    var b = document.createElement('button');
    b.type = 'button';
    b.className = cls;
    b.textContent = text;
    return b;
  }

  // askNote shows a note field under the row's buttons; the conflict is
  // resolved with it when confirmed, taking the store's (edge) or the
  // hub's version when take says so.
  function askNote(r, take) {
    if (r.form && r.form.dataset.take === take) { r.form.querySelector('input').focus(); return; }
    if (r.form) r.form.remove();
    var f = document.createElement('form');
    f.className = 'note';
    var input = document.createElement('input');
    input.name = 'note';
    input.required = true;
    input.maxLength = 500;
    input.placeholder = take === 'edge' ? 'Why the store\'s version stands' :
      take === 'hub' ? 'Why the hub\'s version stands' : 'What was done about it?';
    f.dataset.take = take;
    input.setAttribute('aria-label', 'Resolution note');
    var ok = button('Confirm', 'confirm');
    ok.type = 'submit';
    var cancel = button('Cancel', 'quiet cancel');
    f.appendChild(input);
    f.appendChild(ok);
    f.appendChild(cancel);
    r.act.insertBefore(f, r.err);
    r.form = f;
    input.focus();
    cancel.addEventListener('click', function () { f.remove(); r.form = null; r.err.textContent = ''; });
    f.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var note = input.value.trim();
      if (!note) { r.err.textContent = 'A note is required.'; return; }
      var body = { note: note };
      if (take) body.take = take;
      act(r, ok, 'POST', '/sync/conflicts/' + encodeURIComponent(r.c.id) + '/resolve', body);
    });
  }

  function reapply(r, b) {
    act(r, b, 'POST', '/sync/conflicts/' + encodeURIComponent(r.c.id) + '/reapply', null);
  }

  // act calls a conflict route; on success the conflict leaves the open
  // list (the feed's next diff says so too), on failure the row says why.
  function act(r, b, method, path, body) {
    b.disabled = true;
    r.err.textContent = '';
    api(method, path, body).then(function () {
      removeConflict(r.c.id);
      conflictsChanged();
    }, function (e) {
      b.disabled = false;
      r.err.textContent = e.status === 403 ? 'This account may not resolve conflicts (needs an owner or the ops role).' : e.message;
    });
  }

  // --- formatting -------------------------------------------------------------

  function now() { return Date.now() + state.offset; }

  function secs(v) {
    v = Number(v) || 0;
    return v < 1 ? Math.round(v * 1000) + ' ms' : v.toFixed(1) + ' s';
  }

  if (session.auth) start(); else showLogin('');
})();
