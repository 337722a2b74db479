// Kassa store console, variants section (docs/catalog.md): a product's
// variants (its sizes, colours…) with their sku and price, and a form to
// add one. Everything goes to the edge that serves the console, so it
// works with the hub link down too; a refusal (a sku taken, no options)
// is shown as the API's problem says it. Markdowns are made at the hub.
// Loaded deferred, after console.js: it reads through window.KassaConsole.
(function () {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var st = { products: [], currency: 'AUD', gen: 0 };

  function call(method, path, body) { return window.KassaConsole.session.api(method, path, body); }

  function el(tag, text) {
    var e = document.createElement(tag);
    if (text != null) e.textContent = text;
    return e;
  }

  function digits() { return new Intl.NumberFormat(undefined, { style: 'currency', currency: st.currency }).resolvedOptions().maximumFractionDigits; }
  function money(v) { return new Intl.NumberFormat(undefined, { style: 'currency', currency: st.currency }).format(v / Math.pow(10, digits())); }

  // options reads "size=M, colour=red" as {size: "M", colour: "red"}.
  function options(text) {
    var out = {};
    text.split(',').forEach(function (part) {
      var kv = part.split('=');
      if (kv.length === 2 && kv[0].trim() && kv[1].trim()) out[kv[0].trim()] = kv[1].trim();
    });
    return out;
  }

  function load() {
    var gen = ++st.gen;
    return Promise.all([call('GET', '/catalog/products?limit=200'), call('GET', '/locations?limit=1')]).then(function (r) {
      if (gen !== st.gen) return;
      st.products = (r[0].data || []).filter(function (p) { return !(p.components || []).length; });
      if (r[1].data && r[1].data[0]) st.currency = r[1].data[0].currency || st.currency;
      var sel = $('var-product'), keep = sel.value;
      sel.textContent = '';
      st.products.forEach(function (p) {
        var o = el('option', p.name + ' (' + p.sku + ')');
        o.value = p.id;
        sel.appendChild(o);
      });
      if (keep) sel.value = keep;
      return rows();
    }, function (e) { if (!e.ended) $('var-msg').textContent = 'Cannot read the catalog: ' + e.message; });
  }

  function rows() {
    var id = $('var-product').value, body = $('var-rows');
    if (!id) return;
    return call('GET', '/catalog/products/' + id + '/variants?limit=200').then(function (r) {
      body.textContent = '';
      (r.data || []).forEach(function (v) {
        var tr = el('tr');
        tr.dataset.sku = v.sku;
        var opts = Object.keys(v.options).sort().map(function (k) { return k + ' ' + v.options[k]; }).join(', ');
        [v.name, opts, v.sku, money(v.base_price)].forEach(function (t) { tr.appendChild(el('td', t)); });
        body.appendChild(tr);
      });
      if (!body.children.length) {
        var none = el('tr'), td = el('td', 'No variants: the product is sold as itself.');
        td.colSpan = 4;
        none.appendChild(td);
        body.appendChild(none);
      }
    }, function (e) { $('var-msg').textContent = e.message; });
  }

  function add(ev) {
    ev.preventDefault();
    var id = $('var-product').value, b = { options: options($('var-options').value), sku: $('var-sku').value.trim() };
    var price = $('var-price').value.trim();
    if (price) b.base_price = Math.round(parseFloat(price) * Math.pow(10, digits()));
    $('var-msg').textContent = '';
    call('POST', '/catalog/products/' + id + '/variants', b).then(function (r) {
      $('var-msg').textContent = r.data.name + ' (' + r.data.sku + ') added.';
      $('var-options').value = $('var-sku').value = $('var-price').value = '';
      return rows();
    }, function (e) { $('var-msg').textContent = 'Not added: ' + e.message; });
  }

  $('var-product').addEventListener('change', rows);
  $('var-form').addEventListener('submit', add);
  var shown = function () { if (!$('console').hidden && window.KassaConsole.session.auth) load(); };
  new MutationObserver(shown).observe($('console'), { attributes: true, attributeFilter: ['hidden'] });
  shown();
})();
