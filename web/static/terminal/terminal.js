// Kassa terminal: the open orders of the location and its stock levels,
// live. Plain JavaScript, nothing loaded from anywhere but the edge.
//
// It opens GET /api/v1/ws, signs in with its first message, subscribes to
// orders and stock of its location, and only then reads both by REST: a
// change that arrives meanwhile is applied after the read, so nothing
// falls between the read and the feed (changes carry the whole resource).
// After a drop it reconnects and resubscribes from the last position it
// saw: the edge sends exactly what it missed. A reset (a position the edge
// cannot resume from) reloads by REST.
//
// URL parameter: location_id (default: the org's first location).
(function () {
  'use strict';

  var API = '/api/v1';
  var AUTH_KEY = 'kassa.terminal.auth';
  var params = new URLSearchParams(location.search);
  var state = {
    location: params.get('location_id') || '',
    orders: new Map(),
    stock: new Map(), // product id -> level
    names: new Map(), // product id -> name
    position: '',
    ws: null,
    loaded: false,
    pending: [],
    retry: 0
  };
  var $ = function (id) { return document.getElementById(id); };

  // The token pair stays in localStorage: the till stays signed in across
  // restarts. A refused refresh signs out.
  var session = new KassaSession({
    api: API, storageKey: AUTH_KEY, storage: window.localStorage,
    onEnded: function () { logout(); }
  });

  function api(path) { return session.api('GET', path); }

  function all(path) {
    var out = [];
    function page(cursor) {
      return api(path + (path.indexOf('?') < 0 ? '?' : '&') + 'limit=200' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''))
        .then(function (b) {
          out = out.concat(b.data);
          return b.has_more ? page(b.next_cursor) : out;
        });
    }
    return page('');
  }

  // --- screens -------------------------------------------------------------

  function showLogin() {
    $('screen').hidden = true;
    $('login').hidden = false;
  }

  function logout() {
    session.clear();
    if (state.ws) { state.ws.onclose = null; state.ws.close(); }
    showLogin();
  }

  session.loginForm(start, function () { return 'E-mail or password is wrong'; });
  $('logout').addEventListener('click', logout);

  function start() {
    $('login').hidden = true;
    $('screen').hidden = false;
    var where = state.location ? Promise.resolve(null) : api('/locations').then(function (b) {
      if (!b.data.length) throw new Error('no location');
      state.location = b.data[0].id;
      return b.data[0];
    });
    where.then(function (loc) {
      if (loc) $('location-name').textContent = loc.name;
      connect();
    });
  }

  // --- the feed ------------------------------------------------------------

  function connect() {
    var proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    var ws = new WebSocket(proto + '//' + location.host + API + '/ws');
    state.ws = ws;
    ws.onopen = function () {
      state.retry = 0;
      ws.send(JSON.stringify({ type: 'auth', access_token: session.auth.accessToken }));
      ws.send(JSON.stringify({ type: 'subscribe', topics: ['orders', 'stock'], location_id: state.location, after: state.position }));
    };
    ws.onmessage = function (ev) {
      var m = JSON.parse(ev.data);
      switch (m.type) {
        case 'subscribed':
          live(true);
          state.position = m.position;
          if (!state.loaded) reload();
          break;
        case 'reset':
          state.position = m.position;
          state.loaded = false;
          reload();
          break;
        case 'change':
          state.position = m.position;
          if (state.loaded) apply(m); else state.pending.push(m);
          break;
        case 'error':
          console.warn('terminal feed:', m.status, m.message);
          break;
      }
    };
    ws.onclose = function (ev) {
      live(false);
      if (ev.code === 4401) { logout(); return; }
      if (ev.code === 4403) { // the account may no longer see this till's feed: reconnecting will not help
        logout();
        $('login-error').textContent = 'This account may not use the terminal: log in as a cashier, manager or owner.';
        return;
      }
      // 1001 (the edge restarts), a drop: come back, resume from position.
      var wait = Math.min(5000, 250 * Math.pow(2, state.retry++));
      setTimeout(connect, wait);
    };
  }

  function live(on) {
    $('live').classList.toggle('on', on);
    $('banner').hidden = on;
  }

  // reload reads the location's open orders and stock, then applies the
  // changes that came meanwhile.
  function reload() {
    Promise.all([
      all('/orders?status=open&location_id=' + encodeURIComponent(state.location)),
      all('/inventory/stock?location_id=' + encodeURIComponent(state.location)),
      all('/catalog/products').catch(function () { return []; })
    ]).then(function (r) {
      state.orders.clear();
      state.stock.clear();
      r[2].forEach(function (p) { state.names.set(p.id, p.name); });
      r[0].forEach(function (o) { state.orders.set(o.id, o); });
      r[1].forEach(function (l) { state.stock.set(l.product_id, l); });
      state.loaded = true;
      var pending = state.pending;
      state.pending = [];
      pending.forEach(apply);
      render();
    }, function (e) { console.warn('terminal reload:', e.message); });
  }

  function apply(m) {
    if (m.topic === 'orders' && m.entity === 'order') {
      if (m.data && m.data.status === 'open') state.orders.set(m.id, m.data);
      else state.orders.delete(m.id);
    } else if (m.topic === 'stock' && m.data) {
      state.stock.set(m.data.product_id, m.data);
    }
    render();
  }

  // --- rendering -----------------------------------------------------------

  function money(n, cur) {
    return (n / 100).toFixed(2) + (cur ? ' ' + cur : '');
  }

  function render() {
    var ul = $('orders');
    ul.textContent = '';
    var orders = Array.from(state.orders.values()).sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; });
    orders.forEach(function (o) {
      var li = document.createElement('li');
      li.dataset.id = o.id;
      var num = document.createElement('span');
      num.className = 'num';
      num.textContent = '#' + o.number;
      var lines = document.createElement('span');
      lines.className = 'lines';
      lines.textContent = (o.line_items || []).map(function (l) { return l.quantity + '× ' + l.name; }).join(', ');
      var total = document.createElement('span');
      total.className = 'total';
      total.textContent = money(o.total, o.currency);
      li.append(num, lines, total);
      ul.append(li);
    });
    $('order-count').textContent = '(' + orders.length + ')';
    var tb = $('stock');
    tb.textContent = '';
    Array.from(state.stock.values()).sort(function (a, b) {
      return (state.names.get(a.product_id) || a.product_id).localeCompare(state.names.get(b.product_id) || b.product_id);
    }).forEach(function (l) {
      var tr = document.createElement('tr');
      tr.dataset.product = l.product_id;
      if (l.reorder_point > 0 && l.on_hand <= l.reorder_point) tr.className = 'low';
      var name = document.createElement('td');
      name.textContent = state.names.get(l.product_id) || l.product_id;
      var qty = document.createElement('td');
      qty.className = 'qty';
      qty.textContent = l.on_hand;
      tr.append(name, qty);
      tb.append(tr);
    });
  }

  if (session.auth) start(); else showLogin();
})();
