// Kassa kitchen display: plain JavaScript, no build step, nothing loaded
// from anywhere but the edge that serves it.
//
// On start it reads the board (GET /api/v1/kds/tickets: the open tickets
// and the event id they are current at), then follows the feed
// (GET /api/v1/kds/stream, Server-Sent Events) from that id. EventSource
// resumes by itself with Last-Event-ID after a drop; when it gives up (a
// refused token, a restarted edge) or the edge stops answering /healthz,
// the page opens a new stream from the last id it saw, so no ticket is
// missed or shown twice.
//
// URL parameters: amber and red (seconds before a ticket's timer turns
// amber and red; default 300 and 600), station (preselected), view (cook:
// new and in-progress tickets, tap = ready; pass: ready tickets, tap =
// served), location_id (only that location's tickets), void (seconds a
// voided ticket stays on screen, crossed out, before it leaves; default 8).
//
// A ticket shows its ticket number (#12: per location and business day,
// given by the node), the order number beside it. An order cancelled or
// fully refunded before it was served comes as ticket.voided (void true):
// its card is marked VOID for a moment, then leaves the board.
(function () {
  'use strict';

  var params = new URLSearchParams(location.search);
  function seconds(name, def) {
    var v = Number(params.get(name));
    return v > 0 ? v : def;
  }
  var cfg = {
    amber: seconds('amber', 300),
    red: seconds('red', 600),
    voidFor: seconds('void', 8),
    view: params.get('view') === 'pass' ? 'pass' : 'cook',
    location: params.get('location_id') || ''
  };
  var SHOW = cfg.view === 'pass' ? ['ready'] : ['new', 'in_progress'];
  var DONE = cfg.view === 'pass' ? 'served' : 'ready';
  var API = '/api/v1';
  var AUTH_KEY = 'kassa.kds.auth';
  var STATION_KEY = 'kassa.kds.station';
  var EVENTS = ['ticket.created', 'ticket.updated', 'ticket.bumped', 'ticket.recalled', 'ticket.voided'];

  var state = {
    station: params.get('station') || localStorage.getItem(STATION_KEY) || '',
    stations: [],
    tickets: new Map(),
    lastId: 0,
    es: null,
    offset: 0, // server clock minus ours, ms
    bumped: [], // ids that left this screen, newest last
    retry: 0,
    refreshTimer: 0,
    down: false
  };

  var $ = function (id) { return document.getElementById(id); };

  // --- auth ---------------------------------------------------------------

  // The token pair stays in localStorage: a kitchen screen stays signed in
  // across restarts. A refused refresh logs out.
  var session = new KassaSession({
    api: API, storageKey: AUTH_KEY, storage: window.localStorage,
    onEnded: function () { logout(false); }
  });

  function scheduleRefresh() {
    clearTimeout(state.refreshTimer);
    if (!session.auth) return;
    var wait = Math.max(5000, (session.auth.expiresAt || 0) - Date.now() - 60000);
    state.refreshTimer = setTimeout(function () {
      refresh().then(connect, scheduleRefresh);
    }, wait);
  }

  // refresh swaps the refresh token for a new pair and schedules the next.
  function refresh() {
    return session.refresh().then(scheduleRefresh);
  }

  // api calls the API, refreshing the token once on 401; it resolves to the
  // envelope's data and rejects with an Error carrying the status.
  function api(method, path, body) {
    return session.api(method, path, body).then(function (j) { return j.data; });
  }

  function logout(tell) {
    if (tell) session.logout(); else session.clear();
    clearTimeout(state.refreshTimer);
    if (state.es) state.es.close();
    state.es = null;
    state.tickets.clear();
    showLogin();
  }

  function showLogin() {
    $('screen').hidden = true;
    $('banner').hidden = true;
    $('login').hidden = false;
    $('email').focus();
  }

  session.loginForm(start);

  $('logout').addEventListener('click', function () { logout(true); });

  // --- the feed -------------------------------------------------------------

  function query(o) {
    var q = new URLSearchParams();
    Object.keys(o).forEach(function (k) { if (o[k] !== '' && o[k] !== undefined) q.set(k, o[k]); });
    var s = q.toString();
    return s ? '?' + s : '';
  }

  function start() {
    $('login').hidden = true;
    $('screen').hidden = false;
    $('view-name').textContent = cfg.view === 'pass' ? 'Pass' : 'Cook';
    scheduleRefresh();
    loadBoard();
  }

  function loadBoard() {
    var q = query({ station: state.station, location_id: cfg.location, kitchen_status: SHOW.join(',') });
    return api('GET', '/kds/tickets' + q).then(function (b) {
      state.offset = Date.parse(b.now) - Date.now();
      state.stations = b.stations;
      if (state.station && b.stations.indexOf(state.station) < 0) state.stations = b.stations.concat([state.station]);
      state.tickets.clear();
      b.tickets.forEach(function (t) { if (visible(t)) state.tickets.set(t.id, t); });
      state.lastId = b.last_event_id;
      renderStations();
      render();
      connect();
    }).catch(function (e) {
      if (!session.auth) return;
      setDown(true);
      setTimeout(loadBoard, 2000);
    });
  }

  function connect() {
    if (!session.auth) return;
    if (state.es) state.es.close();
    var es = new EventSource(API + '/kds/stream' + query({
      access_token: session.auth.accessToken, last_event_id: state.lastId,
      station: state.station, location_id: cfg.location
    }));
    state.es = es;
    es.onopen = function () {
      if (state.es !== es) return;
      state.retry = 0;
      setDown(false);
    };
    es.onerror = function () {
      if (state.es !== es) return;
      setDown(true); // EventSource retries by itself while it can
      if (es.readyState === EventSource.CLOSED) {
        // Refused (an expired token, a server error): start a new stream
        // from the last id, with a fresh token, backing off.
        es.close();
        state.es = null;
        var delay = Math.min(10000, 1000 * Math.pow(2, state.retry++));
        setTimeout(function () { refresh().then(connect, function () { setTimeout(connect, delay); }); }, delay);
      }
    };
    EVENTS.forEach(function (t) { es.addEventListener(t, onEvent); });
  }

  function onEvent(e) {
    var d = JSON.parse(e.data);
    state.lastId = Number(e.lastEventId) || d.seq;
    apply(d.ticket);
  }

  function visible(t) {
    return !t.void && t.status !== 'cancelled' && SHOW.indexOf(t.kitchen_status) >= 0 && t.lines.length > 0;
  }

  // apply puts a ticket's new state on the screen (or takes it off). A
  // ticket on screen that turns void stays, marked, for cfg.voidFor
  // seconds, so the cook sees why it went.
  function apply(t) {
    var had = state.tickets.has(t.id);
    if (t.void && had && !state.tickets.get(t.id).void) {
      state.tickets.set(t.id, t);
      setTimeout(function () {
        var cur = state.tickets.get(t.id);
        if (cur && cur.void) {
          state.tickets.delete(t.id);
          render();
        }
      }, cfg.voidFor * 1000);
      render();
      return;
    }
    var i = state.bumped.indexOf(t.id);
    if (visible(t)) {
      state.tickets.set(t.id, t);
      if (i >= 0) state.bumped.splice(i, 1);
    } else {
      state.tickets.delete(t.id);
      if (had && t.status !== 'cancelled' && SHOW.indexOf(t.kitchen_status) < 0 &&
          t.kitchen_status === DONE) {
        if (i >= 0) state.bumped.splice(i, 1);
        state.bumped.push(t.id);
        if (state.bumped.length > 20) state.bumped.shift();
      }
    }
    render();
  }

  function setDown(down) {
    state.down = down;
    $('banner').hidden = !down;
  }

  // The edge's health, every 5 s: EventSource cannot see a connection that
  // died silently (Wi-Fi gone), so a failed check shows the banner and the
  // first good one after it opens a new stream from the last id.
  var wasDown = false;
  setInterval(function () {
    if (!session.auth) return;
    var ctl = new AbortController();
    var timer = setTimeout(function () { ctl.abort(); }, 4000);
    fetch('/healthz', { cache: 'no-store', signal: ctl.signal }).then(function (r) {
      clearTimeout(timer);
      if (!r.ok) throw new Error('unhealthy');
      if (wasDown) {
        wasDown = false;
        connect();
      }
    }).catch(function () {
      clearTimeout(timer);
      wasDown = true;
      setDown(true);
    });
  }, 5000);

  // --- actions --------------------------------------------------------------

  function move(id, verb, to) {
    api('POST', '/kds/tickets/' + id + '/' + verb, { kitchen_status: to }).then(apply, function (e) {
      if (e.status === 409) loadBoard(); // someone else moved it: show the truth
    });
  }

  $('recall').addEventListener('click', function () {
    var id = state.bumped.pop();
    render();
    if (id) move(id, 'recall', SHOW[SHOW.length - 1]);
  });

  // --- rendering ------------------------------------------------------------

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function renderStations() {
    var nav = $('stations');
    nav.textContent = '';
    [''].concat(state.stations).forEach(function (s) {
      var b = el('button', '', s || 'All');
      b.type = 'button';
      b.dataset.station = s;
      b.setAttribute('aria-pressed', String(s === state.station));
      b.addEventListener('click', function () {
        if (s === state.station) return;
        state.station = s;
        localStorage.setItem(STATION_KEY, s);
        state.bumped = [];
        renderStations();
        loadBoard();
      });
      nav.appendChild(b);
    });
  }

  function splitNumber(n) {
    var i = n.lastIndexOf('-');
    if (i < 0) return ['', n];
    return [n.slice(0, i), String(Number(n.slice(i + 1)) || n.slice(i + 1))];
  }

  function sorted() {
    return Array.from(state.tickets.values()).sort(function (a, b) {
      return Date.parse(a.ordered_at) - Date.parse(b.ordered_at);
    });
  }

  function render() {
    var box = $('tickets');
    box.textContent = '';
    var list = sorted();
    if (list.length === 0) box.appendChild(el('p', 'empty', 'No open tickets'));
    list.forEach(function (t) { box.appendChild(card(t)); });
    var live = list.filter(function (t) { return !t.void; }); // a voided ticket is not cooked
    $('count').textContent = live.length + (live.length === 1 ? ' ticket' : ' tickets');
    $('recall').disabled = state.bumped.length === 0;
    renderAllDay(live);
    tick();
  }

  function card(t) {
    var c = el('article', 'ticket ' + t.kitchen_status + (t.void ? ' void' : ''));
    c.dataset.id = t.id;
    c.dataset.ordered = t.ordered_at;
    var h = el('header');
    h.appendChild(el('span', 'num', '#' + (t.ticket_number || splitNumber(t.number)[1])));
    h.appendChild(el('span', 'prefix', t.number));
    h.appendChild(el('span', 'timer', ''));
    c.appendChild(h);
    var meta = el('div', 'meta');
    meta.appendChild(el('span', 'channel ' + t.channel, t.channel));
    meta.appendChild(el('span', 'state', t.void ? 'void' : t.kitchen_status === 'in_progress' ? 'cooking' : t.kitchen_status));
    c.appendChild(meta);
    var ul = el('ul');
    t.lines.forEach(function (l) {
      var li = el('li');
      li.appendChild(el('span', 'qty', l.quantity + '×'));
      li.appendChild(document.createTextNode(' ' + l.name));
      if (l.modifiers && l.modifiers.length) li.appendChild(el('span', 'mods', l.modifiers.join(', ')));
      ul.appendChild(li);
    });
    c.appendChild(ul);
    if (t.notes) c.appendChild(el('div', 'notes', t.notes));
    var actions = el('div', 'actions');
    if (cfg.view === 'cook' && t.kitchen_status === 'new') {
      var s = el('button', 'start', 'Start');
      s.type = 'button';
      s.addEventListener('click', function (ev) { ev.stopPropagation(); move(t.id, 'bump', 'in_progress'); });
      actions.appendChild(s);
    }
    var d = el('button', 'done', cfg.view === 'pass' ? 'Served' : 'Done');
    d.type = 'button';
    actions.appendChild(d);
    c.appendChild(actions);
    if (t.void) {
      actions.textContent = '';
      c.appendChild(el('div', 'voided', t.status === 'cancelled' ? 'VOID: order cancelled' : 'VOID: order refunded'));
      return c;
    }
    c.addEventListener('click', function () { move(t.id, 'bump', DONE); });
    return c;
  }

  function renderAllDay(list) {
    var counts = new Map();
    list.forEach(function (t) {
      t.lines.forEach(function (l) { counts.set(l.name, (counts.get(l.name) || 0) + l.quantity); });
    });
    var ul = $('allday');
    ul.textContent = '';
    Array.from(counts.entries()).sort(function (a, b) { return b[1] - a[1] || a[0].localeCompare(b[0]); })
      .forEach(function (e) {
        var li = el('li');
        li.appendChild(el('b', '', String(e[1])));
        li.appendChild(el('span', '', e[0]));
        ul.appendChild(li);
      });
  }

  function clock(s) {
    s = Math.max(0, Math.floor(s));
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
    var mm = (h > 0 && m < 10 ? '0' : '') + m, ss = (sec < 10 ? '0' : '') + sec;
    return (h > 0 ? h + ':' : '') + mm + ':' + ss;
  }

  // tick refreshes the timers and their colours.
  function tick() {
    var now = Date.now() + state.offset;
    var cards = document.querySelectorAll('.ticket');
    for (var i = 0; i < cards.length; i++) {
      var c = cards[i];
      var age = (now - Date.parse(c.dataset.ordered)) / 1000;
      c.querySelector('.timer').textContent = clock(age);
      c.classList.toggle('red', age >= cfg.red);
      c.classList.toggle('amber', age >= cfg.amber && age < cfg.red);
    }
  }
  setInterval(tick, 1000);

  if (session.auth) start(); else showLogin();
})();
