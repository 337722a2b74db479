// Kassa store console, gift cards section (docs/giftcards.md): the org's
// cards with their balance and status, newest first; a manager or owner
// disables a card (it pays nothing) and re-enables it (it pays again from
// the balance it kept). Everything goes to the edge that serves the
// console, so it works with the hub link down too; a refusal is shown as
// the API's problem says it. Loaded deferred, after console.js: it reads
// through window.KassaConsole.
(function () {
  'use strict';

  var STATUS = { active: 'Active', disabled: 'Disabled', pending: 'Sale not complete' };
  var $ = function (id) { return document.getElementById(id); };
  var st = { gen: 0, currency: 'AUD' };

  function session() { return window.KassaConsole.session; }
  function call(method, path, body) { return session().api(method, path, body); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function money(v, cur) {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: cur || st.currency }).format(v / 100);
  }
  function said(text, bad) {
    $('gift-msg').textContent = text;
    $('gift-msg').className = 'gift-msg' + (bad ? ' bad' : '');
  }

  // load reads the cards (a status filter and a code to find) and draws them.
  function load() {
    var gen = ++st.gen, status = $('gift-status').value, code = $('gift-code').value.trim();
    var read = code ? call('GET', '/gift-cards/lookup?code=' + encodeURIComponent(code)).then(function (r) { return [r.data]; })
      : call('GET', '/gift-cards?limit=200' + (status ? '&status=' + status : '')).then(function (r) { return (r.data || []).reverse(); });
    return read.then(function (cards) {
      if (gen === st.gen) render(cards);
    }, function (e) {
      if (gen !== st.gen || e.ended) return;
      row(e.status === 404 ? 'No gift card of the org has that code.' : e.status === 403 ? 'Only an owner or a manager sees the gift cards.' : 'Cannot read the gift cards: ' + e.message);
    });
  }

  function row(text) {
    var body = $('gift-rows');
    body.textContent = '';
    var tr = el('tr', null, 'none'), td = el('td', text);
    td.colSpan = 5;
    tr.appendChild(td);
    body.appendChild(tr);
  }

  function render(cards) {
    if (!cards.length) return row('No gift cards yet.');
    var body = $('gift-rows');
    body.textContent = '';
    cards.forEach(function (g) {
      var tr = el('tr', null, g.status);
      tr.dataset.code = g.code;
      tr.appendChild(el('td', g.code, 'code'));
      tr.appendChild(el('td', money(g.balance, g.currency), 'num'));
      tr.appendChild(el('td', money(g.initial_amount, g.currency), 'num'));
      tr.appendChild(el('td', STATUS[g.status] || g.status, 'state ' + g.status));
      var acts = el('td', null, 'acts');
      if (g.status === 'active' || g.status === 'disabled') {
        var enable = g.status === 'disabled';
        var b = el('button', enable ? 'Enable' : 'Disable', 'small' + (enable ? '' : ' danger'));
        b.type = 'button';
        b.setAttribute('aria-label', (enable ? 'Enable' : 'Disable') + ' gift card ' + g.code);
        b.addEventListener('click', function () { setStatus(g, enable ? 'enable' : 'disable', b); });
        acts.appendChild(b);
      }
      tr.appendChild(acts);
      body.appendChild(tr);
    });
  }

  function setStatus(g, action, b) {
    b.disabled = true;
    said('');
    call('POST', '/gift-cards/' + g.id + '/' + action).then(function (r) {
      said('Gift card ' + r.data.code + (action === 'enable' ? ' is enabled: it pays again from its ' + money(r.data.balance, r.data.currency) + '.'
        : ' is disabled: it pays nothing until it is enabled again.'));
      return load();
    }, function (e) {
      b.disabled = false;
      said('Not changed: ' + e.message, true);
    });
  }

  $('gift-status').addEventListener('change', load);
  $('gift-find').addEventListener('submit', function (ev) { ev.preventDefault(); said(''); load(); });
  // The section reads the cards whenever the console is shown.
  var shown = function () { if (!$('console').hidden && session().auth) { said(''); load(); } };
  new MutationObserver(shown).observe($('console'), { attributes: true, attributeFilter: ['hidden'] });
  shown();
})();
