// Kassa reports view, shared by the store console (its reports section, the
// store's manager, offline too) and the hub's /reports page (head office,
// every store, a location filter). It builds its own markup inside the
// element marked data-reports and reads through window.KassaConsole (the
// page's api(path) and session). data-locations="pick" adds the store
// filter and the store grouping (the hub); without it the report covers
// the node's own store (the edge).
//
// The user picks a report (sales, tax, payments, stock, movements,
// loyalty, gift cards, what stores owe each other for gift cards, cash, tips,
// campaigns), a range of business days (typed, or a preset: today is the
// store's business day, in its zone and after its cutoff hour) and a
// grouping, then Show: the table of the API's rows (GET /reports/<kind>,
// every figure as the API answers it, money in major units with the
// currency's decimals), a total row where the groups split the whole
// (business days, hours, stores, tills, staff), a chart (uPlot) of net
// sales by day or by hour, and a Download CSV link to the API's CSV of
// the same query (fetched with the session's token when clicked, saved
// as a file).
// docs/reports.md, section Pages.
(function () {
  'use strict';
  var root = document.querySelector('[data-reports]');
  if (!root) return;
  var pickLocation = root.dataset.locations === 'pick';

  // The groupings' names: in the picker, and as the key column's heading.
  var GROUPS = {
    day: ['Business day', 'Business day'], hour: ['Hour of day', 'Hour'], location: ['Store', 'Store'],
    register: ['Till', 'Till'], staff: ['Staff member', 'Staff member'], product: ['Product', 'Product'],
    category: ['Category', 'Category'], payment_method: ['Payment method', 'Payment method'],
    customer: ['Top customers', 'Customer'], none: ['Totals only', '']
  };
  var TENDERS = { cash: 'Cash', card: 'Card', gift_card: 'Gift card', external: 'Other' };
  // Groupings whose groups split the whole: their rows add up to a total.
  var PARTS = ['day', 'hour', 'location', 'register', 'staff'];

  // Column kinds: money (minor units of the row's currency), n (a count),
  // text, pct (basis points), yes (a flag), tender, store, reason (named).
  // Options: sum (added up in the total row), split (the column splits a
  // group: no total), many (a store column: only with several stores),
  // optional (shown only when a row has the field, e.g. a cost), sign
  // (negative in red).
  function col(key, head, kind, opts) {
    var c = { key: key, head: head, kind: kind || 'money', sum: kind === undefined || kind === 'money' };
    for (var k in opts || {}) c[k] = opts[k];
    return c;
  }
  var REPORTS = [
    { kind: 'sales', path: '/reports/sales', title: 'Sales', chart: 'net',
      hint: 'Completed orders on the business day they were completed; refunds on the day they were given.',
      groups: ['day', 'hour', 'location', 'register', 'staff', 'product', 'category', 'payment_method', 'customer', 'none'],
      cols: [col('orders', 'Orders', 'n', { sum: true }), col('gross', 'Gross'), col('manual_discounts', 'Staff discounts'),
        col('campaign_discounts', 'Campaign discounts'), col('tax', 'Tax'), col('sales', 'Sales'), col('refunds', 'Refunds'), col('net', 'Net'),
        col('cost', 'Cost', 'money', { optional: true }), col('gross_margin', 'Gross margin', 'money', { optional: true })] },
    { kind: 'tax', path: '/reports/tax', title: 'Tax', hint: 'Tax collected per rate, less the tax given back in refunds: what the return declares.',
      groups: ['none', 'day', 'location'],
      cols: [col('rate_bps', 'Rate', 'pct', { split: true }), col('inclusive', 'In prices', 'yes', { split: true }), col('orders', 'Orders', 'n'),
        col('sales', 'Sales'), col('taxable', 'Taxable'), col('tax', 'Tax'), col('refunds', 'Refunds'), col('refund_tax', 'Tax refunded'),
        col('net_tax', 'Net tax')] },
    { kind: 'payments', path: '/reports/payments', title: 'Payments',
      hint: 'Taken by each method, against what the tills\' drawers recorded; away from till: taken by an app or online.',
      groups: ['none', 'day', 'location'],
      cols: [col('method', 'Method', 'tender', { split: true }), col('count', 'Payments', 'n'), col('captured', 'Captured'), col('refunded', 'Refunded'),
        col('net', 'Net'), col('drawer_sales', 'Drawer sales'), col('drawer_refunds', 'Drawer refunds'), col('away_from_till', 'Away from till')] },
    { kind: 'inventory', path: '/reports/inventory', title: 'Stock', now: true,
      hint: 'On hand now, valued at the product\'s cost, or at its price when it has none.',
      groups: ['none'],
      cols: [col('location_id', 'Store', 'store', { many: true }), col('sku', 'SKU', 'text'), col('name', 'Product', 'text'),
        col('on_hand', 'On hand', 'n'), col('reorder_point', 'Reorder at', 'n'), col('unit_cost', 'Unit value', 'money', { sum: false }),
        col('at_price', 'Valued at', 'yes'), col('value', 'Value'), col('low', 'Low', 'yes')] },
    { kind: 'movements', path: '/reports/inventory/movements', title: 'Movements', hint: 'Units in (+) and out (−) by reason.',
      groups: ['none', 'day', 'location', 'product'],
      cols: [col('reason', 'Reason', 'reason', { split: true }), col('count', 'Movements', 'n'), col('units', 'Units', 'n')] },
    { kind: 'loyalty', path: '/reports/loyalty', title: 'Loyalty', hint: 'Points of every member (org-wide); outstanding at the end of the day.',
      groups: ['none', 'day'],
      cols: [col('issued', 'Issued', 'n', { sum: true }), col('redeemed', 'Redeemed', 'n', { sum: true }), col('adjusted', 'Adjusted', 'n', { sum: true }),
        col('outstanding', 'Outstanding', 'n')] },
    { kind: 'gift-cards', path: '/reports/gift-cards', title: 'Gift cards',
      hint: 'Gift card money; outstanding is what the cards still hold at the end of the day (the liability).',
      groups: ['none', 'day', 'location'],
      cols: [col('issued', 'Issued'), col('redeemed', 'Redeemed'), col('refunded', 'Refunded onto cards'), col('adjusted', 'Adjusted'),
        col('outstanding', 'Outstanding', 'money', { sum: false })] },
    { kind: 'gift-cards-owed', path: '/reports/gift-cards/owed', title: 'Gift cards owed',
      hint: 'A card sold at one store and spent at another: the store that sold it holds the money and owes the other.',
      groups: ['none'],
      cols: [col('issued_location_id', 'Sold at (owes)', 'store'), col('redeemed_location_id', 'Spent at (is owed)', 'store'), col('amount', 'Amount')] },
    { kind: 'cash', path: '/reports/cash', title: 'Cash', hint: 'Closed drawers (their Z reports): over (+) or short (−) by who opened them.',
      groups: ['staff', 'none', 'day', 'location', 'register'],
      cols: [col('sessions', 'Drawers', 'n', { sum: true }), col('float', 'Float'), col('cash_sales', 'Cash sales'), col('expected', 'Expected'),
        col('counted', 'Counted'), col('over_short', 'Over/short', 'money', { sign: true })] },
    { kind: 'tips', path: '/reports/tips', title: 'Tips',
      hint: 'Tips on payments (never in sales): given on the day of their payment, given back with a whole refund of it; cash tips are in the drawers.',
      groups: ['staff', 'none', 'day', 'location', 'register', 'payment_method'],
      cols: [col('count', 'Tips', 'n', { sum: true }), col('tips', 'Given'), col('refunded', 'Given back'), col('net', 'Net'), col('cash', 'Cash'),
        col('card', 'Card')] },
    { kind: 'campaigns', path: '/reports/campaigns', title: 'Campaigns', hint: 'Campaigns redeemed in these days.',
      groups: ['none'],
      cols: [col('name', 'Campaign', 'text'), col('status', 'Status', 'text'), col('orders', 'Orders', 'n'), col('discount', 'Discount'),
        col('revenue', 'Revenue')] }
  ];
  var byKind = {};
  REPORTS.forEach(function (r) { byKind[r.kind] = r; });

  // grouping is the one the user last picked: kept for the next report
  // that has it, else that report's default.
  var state = { report: REPORTS[0], locations: [], gen: 0, chart: null, csvURL: null, products: null, typed: false, grouping: '' };
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, props, kids) {
    var e = document.createElement(tag);
    for (var k in props || {}) {
      if (k === 'data') for (var d in props.data) e.dataset[d] = props.data[d];
      else e[k] = props[k];
    }
    (kids || []).forEach(function (c) { if (c != null) e.append(c); });
    return e;
  }

  // --- markup -------------------------------------------------------------

  function build() {
    var kinds = el('div', { id: 'report-kinds', className: 'rp-kinds', role: 'group', ariaLabel: 'Report' },
      REPORTS.map(function (r) {
        return el('button', { type: 'button', textContent: r.title, data: { kind: r.kind } });
      }));
    var presets = el('div', { className: 'rp-presets', role: 'group', ariaLabel: 'Days' },
      [['today', 'Today'], ['yesterday', 'Yesterday'], ['week', 'Last 7 days'], ['month', 'This month'], ['last-month', 'Last month']].map(function (p) {
        return el('button', { type: 'button', className: 'quiet', textContent: p[1], data: { preset: p[0] } });
      }));
    var form = el('form', { id: 'report-form', className: 'rp-form' }, [
      pickLocation ? el('label', { id: 'report-location-l' }, ['Store ', el('select', { id: 'report-location' }, [el('option', { value: '', textContent: 'All stores' })])]) : null,
      el('span', { id: 'report-days', className: 'rp-days' }, [
        el('label', null, ['From ', el('input', { id: 'report-from', type: 'date', required: true })]),
        el('label', null, ['To ', el('input', { id: 'report-to', type: 'date', required: true })])]),
      el('label', { id: 'report-group-l' }, ['Group by ', el('select', { id: 'report-group' })]),
      el('label', { id: 'report-low-l', className: 'rp-check' }, [el('input', { id: 'report-low', type: 'checkbox' }), ' Low stock only']),
      el('button', { id: 'report-show', type: 'submit', textContent: 'Show' }),
      el('a', { id: 'report-csv', className: 'button rp-csv', href: '#', hidden: true, textContent: 'Download CSV' })
    ]);
    root.replaceChildren(
      el('h2', { id: 'reports-h', textContent: pickLocation ? 'Reports · every store' : 'Reports · this store' }),
      kinds, el('p', { id: 'report-hint', className: 'hint' }), presets, form,
      el('p', { id: 'report-error', className: 'error', role: 'alert' }),
      el('p', { id: 'report-about', className: 'rp-about' }),
      el('div', { id: 'report-chart', className: 'rp-chart', hidden: true }),
      el('div', { className: 'rp-scroll' }, [el('table', { id: 'report' }, [
        el('thead', null, [el('tr', { id: 'report-head' })]), el('tbody', { id: 'report-rows' }), el('tfoot', { id: 'report-foot' })])]));
  }

  // --- the form -----------------------------------------------------------

  function pick(kind) {
    var r = byKind[kind] || REPORTS[0];
    state.report = r;
    root.dataset.kind = r.kind;
    root.querySelectorAll('#report-kinds button').forEach(function (b) { b.setAttribute('aria-pressed', String(b.dataset.kind === r.kind)); });
    $('report-hint').textContent = r.hint;
    var sel = $('report-group'), keep = state.grouping;
    sel.replaceChildren.apply(sel, r.groups.filter(function (g) { return pickLocation || g !== 'location'; }).map(function (g) {
      return el('option', { value: g, textContent: GROUPS[g][0] });
    }));
    if (r.groups.indexOf(keep) >= 0) sel.value = keep;
    $('report-group-l').hidden = sel.options.length < 2;
    $('report-days').hidden = !!r.now;
    root.querySelector('.rp-presets').hidden = !!r.now;
    $('report-low-l').hidden = r.kind !== 'inventory';
  }

  function iso(d) { return d.toISOString().slice(0, 10); }
  function addDays(day, n) { return iso(new Date(Date.parse(day + 'T00:00:00Z') + n * 86400000)); }

  // today is the business day now at the store picked (else the first):
  // its local date, the day before until its cutoff hour.
  function today() {
    var id = pickLocation ? $('report-location').value : '';
    var loc = state.locations.filter(function (l) { return !id || l.id === id; })[0] || {};
    var parts = {};
    try {
      new Intl.DateTimeFormat('en-CA', { timeZone: loc.timezone || undefined, year: 'numeric', month: '2-digit', day: '2-digit',
        hour: '2-digit', hourCycle: 'h23' }).formatToParts(new Date()).forEach(function (p) { parts[p.type] = p.value; });
    } catch (e) {
      return iso(new Date());
    }
    var day = parts.year + '-' + parts.month + '-' + parts.day;
    return Number(parts.hour) < (loc.day_cutoff_hour || 0) ? addDays(day, -1) : day;
  }

  function preset(name) {
    var t = today(), first = t.slice(0, 8) + '01';
    var range = { today: [t, t], yesterday: [addDays(t, -1), addDays(t, -1)], week: [addDays(t, -6), t], month: [first, t],
      'last-month': [addDays(first, -1).slice(0, 8) + '01', addDays(first, -1)] }[name];
    $('report-from').value = range[0];
    $('report-to').value = range[1];
  }

  function query() {
    var r = state.report, q = [];
    if (!r.now) q.push('date_from=' + encodeURIComponent($('report-from').value), 'date_to=' + encodeURIComponent($('report-to').value));
    if (!$('report-group-l').hidden) q.push('group_by=' + encodeURIComponent($('report-group').value));
    if (pickLocation && $('report-location').value) q.push('location_id=' + encodeURIComponent($('report-location').value));
    if (r.kind === 'inventory' && $('report-low').checked) q.push('low_stock=true');
    return r.path + (q.length ? '?' + q.join('&') : '');
  }

  // --- formatting ---------------------------------------------------------

  var decimals = {};
  function scale(cur) {
    if (!(cur in decimals)) {
      try {
        decimals[cur] = new Intl.NumberFormat('en', { style: 'currency', currency: cur }).resolvedOptions().maximumFractionDigits;
      } catch (e) {
        decimals[cur] = 2;
      }
    }
    return decimals[cur];
  }
  // money is minor units in major units, exactly (no floating point):
  // thousands grouped, the currency's decimals, − for negatives.
  function money(minor, cur) {
    var d = scale(cur || 'AUD'), s = String(Math.abs(Math.trunc(Number(minor) || 0))).padStart(d + 1, '0');
    var whole = s.slice(0, s.length - d).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return (minor < 0 ? '−' : '') + whole + (d ? '.' + s.slice(s.length - d) : '');
  }
  function count(n) { return (n < 0 ? '−' : '') + String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function storeName(id, info) {
    if (id === '') return 'Head office';
    var l = (info.locations || []).concat(state.locations).filter(function (x) { return x.id === id; })[0];
    return l ? l.name : id;
  }
  function cellText(c, r, info) {
    var v = r[c.key];
    if (v == null && c.optional) return '';
    switch (c.kind) {
      case 'money': return money(v, r.currency);
      case 'n': return count(v);
      case 'pct': return (v / 100) + ' %';
      case 'yes': return { inclusive: v ? 'included' : 'added', at_price: v ? 'price' : 'cost' }[c.key] || (v ? 'low' : '');
      case 'tender': return TENDERS[v] || v;
      case 'store': return storeName(v, info);
      case 'reason': return String(v).replace(/_/g, ' ');
    }
    return v == null ? '' : String(v);
  }
  // keyText names a row's group.
  function keyText(r, group, info) {
    if (r.label) return r.label;
    var g = r.group;
    switch (group) {
      case 'none': return 'All';
      case 'hour': return g + ':00';
      case 'location': return storeName(g, info);
      case 'payment_method': return TENDERS[g] || g;
      case 'product': return (state.products && state.products[g]) || g;
      case 'customer': return g ? g : 'No customer';
      case 'register': return g ? g : 'No till';
    }
    return g || '—';
  }

  // --- the table ----------------------------------------------------------

  function columns(rows) {
    var cur = {};
    rows.forEach(function (r) { if (r.currency) cur[r.currency] = true; });
    // A store column where there are several stores; an optional figure
    // (a cost: only products that have one) where a row has it.
    var cols = state.report.cols.filter(function (c) {
      return (!c.many || state.locations.length > 1 || pickLocation) &&
        (!c.optional || rows.some(function (r) { return r[c.key] != null; }));
    });
    if (Object.keys(cur).length > 1) cols = [col('currency', 'Currency', 'text', { split: true })].concat(cols);
    return { cols: cols, currencies: Object.keys(cur) };
  }

  function td(text, c) {
    var cell = el('td', { textContent: text });
    if (c) {
      cell.dataset.col = c.key;
      // Figures (money, counts) and plain text read as the API's CSV has
      // them; the others are named (a tender, a store, a rate in %).
      if (c.kind === 'money' || c.kind === 'n') cell.className = 'num';
      if (c.kind === 'money' || c.kind === 'n' || c.kind === 'text') cell.dataset.plain = '';
    }
    return cell;
  }

  function table(rows, info, group) {
    var cs = columns(rows), keyed = group !== 'none' && state.report.groups.length > 1;
    var head = $('report-head');
    head.replaceChildren();
    if (keyed) head.append(el('th', { id: 'report-key', textContent: GROUPS[group][1] }));
    cs.cols.forEach(function (c) { head.append(el('th', { textContent: c.head, className: c.kind === 'text' || c.kind === 'store' ? '' : 'num' })); });
    var body = $('report-rows'), foot = $('report-foot');
    body.replaceChildren();
    foot.replaceChildren();
    if (!rows.length) {
      var none = state.report.kind === 'inventory' ? ($('report-low').checked ? 'No product is at or below its reorder point.' : 'No stock is kept here.') :
        'Nothing in these days.';
      body.append(el('tr', { className: 'none' }, [el('td', { colSpan: cs.cols.length + 1, textContent: none })]));
      return;
    }
    rows.forEach(function (r) {
      var tr = el('tr', { data: { group: r.group == null ? '' : r.group } });
      if (r.low) tr.className = 'low';
      if (keyed) tr.append(el('th', { scope: 'row', textContent: keyText(r, group, info) }));
      cs.cols.forEach(function (c) {
        var cell = td(cellText(c, r, info), c);
        if (c.sign && r[c.key] < 0) cell.classList.add('short');
        tr.append(cell);
      });
      body.append(tr);
    });
    // The total row: where the groups split the whole, in one currency,
    // and no column splits a group further (a tax rate, a tender).
    var whole = (keyed && PARTS.indexOf(group) >= 0) || state.report.kind === 'inventory';
    if (!whole || rows.length < 2 || cs.currencies.length > 1 || cs.cols.some(function (c) { return c.split; })) return;
    var tr = el('tr', { id: 'report-total' });
    if (keyed) tr.append(el('th', { scope: 'row', textContent: 'Total' }));
    cs.cols.forEach(function (c) {
      if (!c.sum) { tr.append(td(c === cs.cols[0] && !keyed ? 'Total' : '', null)); return; }
      var sum = 0;
      rows.forEach(function (r) { sum += Number(r[c.key]) || 0; });
      tr.append(td(c.kind === 'money' ? money(sum, cs.currencies[0]) : count(sum), c));
    });
    foot.append(tr);
  }

  // --- the chart (sales by day or by hour) ---------------------------------

  function draw(rows, group, info) {
    var box = $('report-chart');
    if (state.chart) { state.chart.destroy(); state.chart = null; }
    box.hidden = !(state.report.chart && (group === 'day' || group === 'hour') && window.uPlot);
    if (box.hidden) return;
    // Every day of the range (every hour of the day) gets its bar, 0 when
    // nothing was sold, so a gap reads as a gap. One currency: the first.
    var cur = rows.length ? rows[0].currency : ((info.locations || [])[0] || {}).currency || '';
    var byKey = {};
    rows.forEach(function (r) { if (r.currency === cur) byKey[r.group] = (byKey[r.group] || 0) + r[state.report.chart]; });
    var labels = [];
    if (group === 'hour') {
      for (var h = 0; h < 24; h++) labels.push(String(h).padStart(2, '0'));
    } else {
      for (var d = info.date_from; d <= info.date_to && labels.length < 366; d = addDays(d, 1)) labels.push(d);
    }
    var xs = labels.map(function (_, i) { return i; });
    var net = labels.map(function (k) { return (byKey[k] || 0) / Math.pow(10, scale(cur || 'AUD')); });
    var shown = labels.map(function (k) { return group === 'hour' ? k + ':00' : k.slice(5); });
    var every = Math.max(1, Math.ceil(labels.length / Math.max(4, Math.floor(width() / 56))));
    state.chart = new window.uPlot({
      width: width(), height: 220,
      title: 'Net sales (' + cur + ') by ' + (group === 'hour' ? 'hour of day' : 'business day'),
      scales: { x: { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } } },
      legend: { show: false },
      axes: [{ splits: function () { return xs.filter(function (i) { return i % every === 0; }); },
        values: function (u, vals) { return vals.map(function (v) { return shown[v] || ''; }); } },
      { size: 64, values: function (u, vals) { return vals.map(function (v) { return money(Math.round(v * Math.pow(10, scale(cur || 'AUD'))), cur); }); } }],
      series: [{ label: GROUPS[group][1] }, { label: 'Net', stroke: '#1f6feb', fill: 'rgba(31,111,235,0.6)', width: 1,
        paths: window.uPlot.paths.bars({ size: [0.7, 60] }), points: { show: false } }]
    }, [xs, net], box);
  }
  function width() { return Math.max(260, root.clientWidth - 32); }

  // --- showing ------------------------------------------------------------

  function about(info, n) {
    var r = state.report, parts = [r.title];
    parts.push(r.now ? 'now' : info.date_from === info.date_to ? 'business day ' + info.date_from : 'business days ' + info.date_from + ' to ' + info.date_to);
    if (info.group_by && info.group_by !== 'none' && r.groups.length > 1) parts.push('by ' + GROUPS[info.group_by][0].toLowerCase());
    var locs = info.locations || [];
    // The zone of the days: the store's; each store's own; or, for the
    // org-wide ledgers (loyalty, gift cards), the one the API names.
    parts.push(locs.length === 1 ? locs[0].name + ' (' + locs[0].timezone + ')' :
      info.timezone && info.timezone !== 'per location' ? locs.length + ' stores, business days in ' + info.timezone :
        locs.length + ' stores, each by its own day');
    parts.push(n + (n === 1 ? ' row' : ' rows'));
    return parts.join(' · ');
  }

  // productNames loads the catalog's names once, for movements by product
  // (their rows carry the product's id only).
  function productNames() {
    if (state.products) return Promise.resolve();
    var names = {};
    function page(cursor) {
      return window.KassaConsole.api('/catalog/products?limit=200' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')).then(function (j) {
        (j.data || []).forEach(function (p) { names[p.id] = p.name; });
        return j.has_more && j.next_cursor ? page(j.next_cursor) : null;
      });
    }
    return page('').then(function () { state.products = names; }, function () { state.products = {}; });
  }

  function show(ev) {
    if (ev) ev.preventDefault();
    // A Show right after a sign-in, before the observer saw the section
    // come into sight, starts afresh now: the observer's reset would
    // otherwise drop this report when it ran.
    watch();
    var r = state.report, gen = ++state.gen, group = $('report-group').value;
    if (!r.now && !$('report-from').value) preset('week');
    var q = query();
    $('report-error').textContent = '';
    root.dataset.state = 'loading';
    $('report-csv').hidden = true;
    var need = r.kind === 'movements' && group === 'product' ? productNames() : Promise.resolve();
    need.then(function () { return window.KassaConsole.api(q); }).then(function (j) {
      if (gen !== state.gen) return null;
      var rows = j.data || [], info = j.report || {};
      if (state.report.groups.length < 2) group = 'none';
      table(rows, info, group);
      draw(rows, group, info);
      $('report-about').textContent = about(info, rows.length);
      root.dataset.query = q;
      root.dataset.state = 'shown';
      offerCSV(q);
    }).catch(function (e) {
      if (gen !== state.gen) return;
      root.dataset.state = 'failed';
      $('report-error').textContent = e.status === 403 ? 'This account cannot read reports: sign in as an owner or a manager.' : e.message;
    });
  }

  // offerCSV points the Download CSV link at the same report as CSV. The
  // file is fetched when the link is clicked (with the session's token,
  // so not by a plain href), then saved under the link's name.
  function offerCSV(q) {
    var a = $('report-csv'), r = state.report;
    if (state.csvURL) { URL.revokeObjectURL(state.csvURL); state.csvURL = null; }
    a.href = '#';
    a.dataset.src = window.KassaConsole.session.base + q + (q.indexOf('?') < 0 ? '?' : '&') + 'format=csv';
    a.download = r.kind + (r.now ? '-now' : '-' + $('report-from').value + '-to-' + $('report-to').value) +
      (!$('report-group-l').hidden ? '-by-' + $('report-group').value : '') + '.csv';
    a.hidden = false;
  }
  function downloadCSV(ev) {
    var a = $('report-csv'), src = a.dataset.src, s = window.KassaConsole.session;
    if (state.csvURL && a.href === state.csvURL) return; // fetched: the browser saves it
    ev.preventDefault();
    $('report-error').textContent = '';
    // A token that expired meanwhile is refreshed once, as the API calls do.
    function get(again) {
      return fetch(src, { headers: { Authorization: 'Bearer ' + (s.auth || {}).accessToken, Accept: 'text/csv' }, cache: 'no-store' }).then(function (res) {
        if (res.status === 401 && again) return s.refresh().then(function () { return get(false); });
        if (!res.ok) throw new Error('The CSV could not be fetched (' + res.status + '): show the report again.');
        return res.blob();
      });
    }
    get(true)
      .then(function (b) {
        if (a.dataset.src !== src) return; // another report is shown meanwhile
        state.csvURL = URL.createObjectURL(b);
        a.href = state.csvURL;
        a.click();
      })
      .catch(function (e) { $('report-error').textContent = e.message; });
  }

  // locations fills the store filter (the hub) and gives every page the
  // stores' zones and cutoffs for today.
  function locations() {
    var gen = state.gen;
    return window.KassaConsole.api('/locations?limit=200').then(function (j) {
      if (gen !== state.gen) return;
      state.locations = j.data || [];
      if (!pickLocation) return;
      var sel = $('report-location');
      state.locations.forEach(function (l) { sel.append(el('option', { value: l.id, textContent: l.name })); });
    }, function () {});
  }

  // reset forgets what was shown and read (answers still on their way are
  // dropped): the table says what to do, the filter has All stores only.
  function reset() {
    state.gen++;
    state.locations = [];
    state.products = null;
    state.typed = false;
    if (state.chart) { state.chart.destroy(); state.chart = null; }
    if (state.csvURL) { URL.revokeObjectURL(state.csvURL); state.csvURL = null; }
    $('report-chart').hidden = $('report-csv').hidden = true;
    $('report-about').textContent = $('report-error').textContent = '';
    $('report-head').replaceChildren();
    $('report-foot').replaceChildren();
    $('report-rows').replaceChildren(el('tr', { className: 'none' }, [el('td', { textContent: 'Pick a report and the days, then Show.' })]));
    delete root.dataset.query;
    delete root.dataset.state;
    if (pickLocation) {
      var sel = $('report-location');
      while (sel.options.length > 1) sel.remove(1);
    }
    preset('week');
  }

  build();
  pick(REPORTS[0].kind);
  root.querySelector('#report-kinds').addEventListener('click', function (ev) {
    var b = ev.target.closest('button[data-kind]');
    if (!b) return;
    pick(b.dataset.kind);
    show();
  });
  root.querySelector('.rp-presets').addEventListener('click', function (ev) {
    var b = ev.target.closest('button[data-preset]');
    if (!b) return;
    preset(b.dataset.preset);
    show();
  });
  $('report-form').addEventListener('submit', show);
  $('report-csv').addEventListener('click', downloadCSV);
  $('report-group').addEventListener('change', function () { state.grouping = $('report-group').value; });
  ['report-from', 'report-to'].forEach(function (id) { $(id).addEventListener('input', function () { state.typed = true; }); });
  window.addEventListener('resize', function () { if (state.chart) state.chart.setSize({ width: width(), height: 220 }); });
  // Each sign-in starts afresh: whenever the section comes into sight
  // (the page shows it after a sign-in) the last user's report is cleared
  // and the stores are read again — the next user may be of another org.
  // The last seven days until the stores are known, then by the store's
  // own business day (unless the user typed days meanwhile).
  var inSight = false;
  function watch() {
    var now = root.offsetParent !== null && !!window.KassaConsole && !!window.KassaConsole.session.auth;
    if (now === inSight) return;
    inSight = now;
    reset();
    if (now) locations().then(function () { if (!state.typed) preset('week'); });
  }
  reset();
  new MutationObserver(watch).observe(document.body, { attributes: true, subtree: true, attributeFilter: ['hidden'] });
  watch();
})();
