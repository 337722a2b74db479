// Kassa pages' shared session: the sign-in and REST code every page (KDS,
// store console, terminal, ops monitor) loads as <page>/session.js, so the
// token handling lives in one place. Plain JavaScript, no build step.
//
//   var s = new KassaSession({ storageKey: 'kassa.ops.auth' });
//
// Options: api (the API's base path, default /api/v1), storageKey (where
// the token pair is kept), storage (default sessionStorage, so the session
// ends with the tab; a kitchen or till screen passes localStorage),
// timeoutMs (a request that takes longer counts as no answer, default
// 8000), unreachable (the message of that error), gatewayDown (a 502-504
// from a proxy counts as no answer too), onResponse (called with every
// Response, e.g. to read the Date header) and onEnded (called with the
// error once the session ended: the refresh token was refused).
//
// s.auth is the token pair or null; loginForm wires the page's sign-in
// form; request, refresh, api, login and logout return promises that reject with an Error carrying status (the HTTP
// status), retryAfter (its Retry-After, seconds), unreachable (no answer) or ended (log in again).
(function () {
  'use strict';

  function KassaSession(o) {
    this.base = o.api || '/api/v1';
    this.key = o.storageKey;
    this.storage = o.storage || window.sessionStorage;
    this.timeoutMs = o.timeoutMs || 8000;
    this.unreachableMessage = o.unreachable || 'The server is not answering.';
    this.gatewayDown = !!o.gatewayDown;
    this.onResponse = o.onResponse || null;
    this.onEnded = o.onEnded || null;
    this.refreshing = null;
    this.auth = this.load();
  }

  KassaSession.prototype.load = function () {
    try { return JSON.parse(this.storage.getItem(this.key)); } catch (e) { return null; }
  };

  // save keeps a token pair from /auth/login or /auth/refresh.
  KassaSession.prototype.save = function (d) {
    this.auth = { accessToken: d.accessToken, refreshToken: d.refreshToken, expiresAt: Date.now() + (d.expiresIn || 0) * 1000 };
    this.storage.setItem(this.key, JSON.stringify(this.auth));
  };

  KassaSession.prototype.clear = function () {
    this.auth = null;
    this.storage.removeItem(this.key);
  };

  // problem turns an RFC 9457 problem into one line, naming bad fields.
  function problem(j, status) {
    var s = j.detail || j.title || ('HTTP ' + status);
    if (j.errors && j.errors.length) {
      s += ' (' + j.errors.map(function (e) { return (e.field ? e.field + ': ' : '') + (e.message || e.detail || ''); }).join('; ') + ')';
    }
    return s;
  }

  KassaSession.prototype.unreachable = function () {
    var e = new Error(this.unreachableMessage);
    e.unreachable = true;
    return e;
  };

  KassaSession.ended = function () {
    var e = new Error('Your session ended: log in again.');
    e.status = 401;
    e.ended = true;
    return e;
  };

  // request fetches path under the API with a timeout and resolves to the
  // JSON envelope; it rejects with err.unreachable set when nothing answered.
  // headers (optional) are sent too, e.g. an Idempotency-Key.
  KassaSession.prototype.request = function (method, path, body, token, headers) {
    var s = this, ctl = new AbortController();
    var t = setTimeout(function () { ctl.abort(); }, s.timeoutMs);
    var h = Object.assign({}, headers || {});
    if (token) h.Authorization = 'Bearer ' + token;
    if (body) h['Content-Type'] = 'application/json';
    return fetch(s.base + path, {
      method: method, headers: h, body: body ? JSON.stringify(body) : undefined,
      cache: 'no-store', signal: ctl.signal
    }).then(function (r) {
      clearTimeout(t);
      if (s.onResponse) s.onResponse(r);
      if (s.gatewayDown && (r.status === 502 || r.status === 503 || r.status === 504)) throw s.unreachable();
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (!r.ok) {
          var e = new Error(problem(j, r.status));
          e.status = r.status;
          e.retryAfter = Number(r.headers.get('Retry-After')) || 0; // seconds, on a 429 or 503
          throw e;
        }
        return j;
      });
    }, function () {
      clearTimeout(t);
      throw s.unreachable();
    });
  };

  // end forgets the session and tells the page.
  KassaSession.prototype.end = function () {
    var e = KassaSession.ended();
    this.clear();
    if (this.onEnded) this.onEnded(e);
    return e;
  };

  // refresh swaps the refresh token for a new pair once, however many
  // callers ask at the same time; a refused one ends the session.
  KassaSession.prototype.refresh = function () {
    var s = this;
    if (s.refreshing) return s.refreshing;
    if (!s.auth || !s.auth.refreshToken) return Promise.reject(KassaSession.ended());
    s.refreshing = s.request('POST', '/auth/refresh', { refreshToken: s.auth.refreshToken }).then(function (j) {
      s.save(j.data);
    }, function (e) {
      if (e.status === 401 || e.status === 400) throw s.end();
      throw e;
    });
    s.refreshing.then(done, done);
    function done() { s.refreshing = null; }
    return s.refreshing;
  };

  // api calls the API with the session's token, refreshing it once on 401.
  // headers (optional) are sent with each try.
  KassaSession.prototype.api = function (method, path, body, headers) {
    var s = this;
    if (!s.auth) return Promise.reject(KassaSession.ended());
    return s.request(method, path, body, s.auth.accessToken, headers).catch(function (e) {
      if (e.status !== 401) throw e;
      return s.refresh().then(function () { return s.request(method, path, body, s.auth.accessToken, headers); });
    }).catch(function (e) {
      if (e.status === 401 && !e.ended) throw s.end();
      throw e;
    });
  };

  // login signs in and keeps the token pair.
  KassaSession.prototype.login = function (email, password) {
    var s = this;
    return s.request('POST', '/auth/login', { email: email, password: password }).then(function (j) {
      s.save(j.data);
      return j;
    });
  };

  // loginForm wires the page's sign-in form (#login with #email, #password,
  // #login-btn and #login-error): it signs in, then calls onIn; a failure
  // shows say(err), by default the error's own message.
  KassaSession.prototype.loginForm = function (onIn, say) {
    var s = this, $ = function (id) { return document.getElementById(id); };
    $('login').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var btn = $('login-btn');
      btn.disabled = true;
      $('login-error').textContent = '';
      s.login($('email').value.trim(), $('password').value).then(function () {
        $('password').value = '';
        onIn();
      }, function (e) {
        $('login-error').textContent = say ? say(e) : e.message;
      }).then(function () { btn.disabled = false; });
    });
  };

  // logout revokes the session at the server (best effort) and forgets it.
  KassaSession.prototype.logout = function () {
    if (this.auth) this.request('POST', '/auth/logout', null, this.auth.accessToken).catch(function () {});
    this.clear();
  };

  window.KassaSession = KassaSession;
})();
