// Sales report section of the store console: a range of business days and
// a grouping; a chart (uPlot) of net sales by day or by hour, the table,
// and the same report as CSV (GET /reports/sales?format=csv, fetched with
// the session's token and offered as a file).
(function () {
  'use strict';
  function $(id) { return document.getElementById(id); }
  var MONEY = ['gross', 'discounts', 'tax', 'sales', 'refunds', 'net'];
  var KEYS = { day: 'Business day', hour: 'Hour', register: 'Till', staff: 'Staff member', product: 'Product',
    category: 'Category', payment_method: 'Payment method' };
  var chart = null, csvURL = null;

  function today(offsetDays) {
    var d = new Date(Date.now() + offsetDays * 86400000);
    return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0');
  }
  function money(minor) { return (minor / 100).toFixed(2); }
  function query() {
    return 'date_from=' + encodeURIComponent($('report-from').value) + '&date_to=' + encodeURIComponent($('report-to').value) +
      '&group_by=' + encodeURIComponent($('report-group').value);
  }
  function rowOf(r) {
    var v = { gross: r.gross, discounts: r.manual_discounts + r.campaign_discounts, tax: r.tax, sales: r.sales, refunds: r.refunds, net: r.net };
    var tr = document.createElement('tr');
    tr.dataset.group = r.group;
    var td = document.createElement('td');
    td.textContent = r.label || (r.group === '' ? 'All' : r.group);
    tr.appendChild(td);
    td = document.createElement('td'); td.textContent = String(r.orders); tr.appendChild(td);
    MONEY.forEach(function (k) { var c = document.createElement('td'); c.textContent = money(v[k]); tr.appendChild(c); });
    return tr;
  }
  function table(rows) {
    var body = $('report-rows');
    body.textContent = '';
    if (!rows.length) {
      var tr = document.createElement('tr'); tr.className = 'none';
      var td = document.createElement('td'); td.colSpan = 8; td.textContent = 'No sales in these days.';
      tr.appendChild(td); body.appendChild(tr);
      return;
    }
    rows.forEach(function (r) { body.appendChild(rowOf(r)); });
  }
  function draw(rows, group) {
    var box = $('report-chart');
    if (chart) { chart.destroy(); chart = null; }
    box.hidden = !(group === 'day' || group === 'hour') || !rows.length;
    if (box.hidden) return;
    var xs = rows.map(function (_, i) { return i; });
    var labels = rows.map(function (r) { return group === 'hour' ? r.group + ':00' : r.group; });
    var net = rows.map(function (r) { return r.net / 100; });
    var cur = rows[0].currency || '';
    chart = new uPlot({
      width: Math.max(300, box.parentNode.clientWidth - 20), height: 220,
      title: 'Net sales (' + cur + ') by ' + (group === 'hour' ? 'hour of day' : 'business day'),
      scales: { x: { time: false } },
      axes: [{ values: function (u, vals) { return vals.map(function (v) { return labels[v] || ''; }); } },
        { label: cur, size: 60 }],
      series: [{ label: KEYS[group], value: function (u, v) { return v == null ? '' : labels[v]; } },
        { label: 'Net', stroke: '#1f6feb', fill: 'rgba(31,111,235,0.15)', width: 2, points: { show: true, size: 6 },
          value: function (u, v) { return v == null ? '' : v.toFixed(2); } }]
    }, [xs, net], box);
  }
  function csv() {
    var c = window.KassaConsole, s = c.session, a = $('report-csv');
    a.hidden = true;
    var src = s.base + '/reports/sales?' + query() + '&format=csv';
    a.dataset.src = src;
    a.download = 'sales-' + $('report-from').value + '-to-' + $('report-to').value + '-by-' + $('report-group').value + '.csv';
    return fetch(src, { headers: { Authorization: 'Bearer ' + s.auth.accessToken, Accept: 'text/csv' }, cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('CSV: ' + r.status); return r.blob(); })
      .then(function (b) {
        if (csvURL) URL.revokeObjectURL(csvURL);
        csvURL = URL.createObjectURL(b);
        a.href = csvURL;
        a.hidden = false;
      });
  }
  function show(ev) {
    if (ev) ev.preventDefault();
    var group = $('report-group').value;
    $('report-error').textContent = '';
    $('report-key').textContent = KEYS[group];
    window.KassaConsole.api('/reports/sales?' + query()).then(function (j) {
      var rows = j.data || [];
      table(rows);
      draw(rows, group);
      $('report').dataset.state = 'shown';
      return csv();
    }).catch(function (e) { $('report-error').textContent = e.message; });
  }
  $('report-from').value = today(-6);
  $('report-to').value = today(0);
  $('report-form').addEventListener('submit', show);
})();
