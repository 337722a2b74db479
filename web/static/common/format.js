// Kassa pages' shared formatting: the API timestamps, ages and table cells
// the ops monitor and the store console both show. Loaded beside a page as
// <page>/format.js, like session.js. Plain JavaScript, no build step.
//
//   var f = KassaFormat(now); // now() is the server's clock, ms
(function () {
  'use strict';

  function KassaFormat(now) {
    // time parses an API timestamp; the zero time and garbage are null.
    function time(s) {
      if (!s) return null;
      var t = Date.parse(s);
      return isNaN(t) || new Date(t).getUTCFullYear() < 2000 ? null : t;
    }

    // clock is the time of day, with the date when it is not today.
    function clock(t, withYear) {
      var d = new Date(t), today = new Date(now());
      var hm = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
      if (d.toDateString() === today.toDateString()) return hm;
      var day = { day: 'numeric', month: 'short' };
      if (withYear) day.year = 'numeric';
      return d.toLocaleDateString([], day) + ' ' + hm;
    }

    function ago(t) {
      var s = Math.max(0, Math.round((now() - t) / 1000));
      if (s < 60) return s + ' s';
      var m = Math.floor(s / 60);
      if (m < 60) return m + ' min';
      var h = Math.floor(m / 60);
      if (h < 48) return h + ' h ' + (m % 60) + ' min';
      return Math.floor(h / 24) + ' days';
    }

    // json is a record's JSON cut to one table cell.
    function json(v) {
      if (v === null || v === undefined) return '';
      var s = typeof v === 'string' ? v : JSON.stringify(v);
      return s.length > 160 ? s.slice(0, 157) + '…' : s;
    }

    // cell appends a <td> with text (in <code> when code is set).
    function cell(tr, text, cls, code) {
      var td = document.createElement('td');
      if (cls) td.className = cls;
      if (code) {
        var c = document.createElement('code');
        c.textContent = text;
        td.appendChild(c);
      } else {
        td.textContent = text;
      }
      tr.appendChild(td);
      return td;
    }

    return { time: time, clock: clock, ago: ago, json: json, cell: cell };
  }

  window.KassaFormat = KassaFormat;
})();
