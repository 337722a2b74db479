// Sales report section of the store console and the hub's reports page
// (window.KassaConsole: their api and session): a range of business days and
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
    box.hidden = !(group === 'day' || group === 'hour');
    if (box.hidden) return;
    // Every day of the range (every hour of the day) gets its bar, 0 when
    // nothing was sold, so a gap reads as a gap.
    var byKey = {};
    rows.forEach(function (r) { byKey[r.group] = r.net / 100; });
    var labels = [];
    if (group === 'hour') {
      for (var h = 0; h < 24; h++) labels.push(String(h).padStart(2, '0'));
    } else {
      for (var d = new Date($('report-from').value + 'T00:00:00Z'), end = new Date($('report-to').value + 'T00:00:00Z');
        d <= end && labels.length < 366; d = new Date(d.getTime() + 86400000)) labels.push(d.toISOString().slice(0, 10));
    }
    var xs = labels.map(function (_, i) { return i; });
    var net = labels.map(function (k) { return byKey[k] || 0; });
    if (group === 'hour') labels = labels.map(function (k) { return k + ':00'; });
    var cur = rows.length ? rows[0].currency : '';
    chart = new uPlot({
      width: Math.max(300, box.parentNode.clientWidth - 20), height: 220,
      title: 'Net sales (' + cur + ') by ' + (group === 'hour' ? 'hour of day' : 'business day'),
      scales: { x: { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } } },
      legend: { show: false },
      axes: [{ splits: function () { return xs; }, values: function (u, vals) { return vals.map(function (v) { return labels[v] || ''; }); } },
        { label: cur, size: 60 }],
      series: [{ label: KEYS[group], value: function (u, v) { return v == null ? '' : labels[v]; } },
        { label: 'Net', stroke: '#1f6feb', fill: 'rgba(31,111,235,0.6)', width: 1, paths: uPlot.paths.bars({ size: [0.7, 60] }),
          points: { show: false },
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
