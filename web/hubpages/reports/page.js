// The hub's reports page: sign-in (session.js), then the shared reports
// view (reports.js, data-locations="pick") over the hub's API: every
// report of every store, or of the one picked.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var session = new KassaSession({ api: '/api/v1', storageKey: 'kassa.reports.auth', timeoutMs: 15000,
    unreachable: 'The hub is not answering.', onEnded: function (e) { showLogin(e.message); } });
  window.KassaConsole = { api: function (path) { return session.api('GET', path); }, session: session };
  function showLogin(message) {
    $('console').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
  }
  function start() {
    $('login').hidden = true;
    $('console').hidden = false;
  }
  session.loginForm(start, function (e) { return e.status === 401 ? 'Wrong e-mail or password.' : e.message; });
  $('logout').addEventListener('click', function () { session.logout(); showLogin(''); });
  if (session.auth) start(); else showLogin('');
})();
