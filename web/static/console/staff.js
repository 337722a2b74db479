// Kassa store console, staff section (docs/staff.md): the org's staff with
// their role, locations, status and PIN; add a cashier, edit a name, role
// or locations, deactivate and reactivate, reset a password, set or
// remove a PIN. Everything goes to the edge that serves the console, so it
// works with the hub link down too; the edge (and later the hub) apply the
// role rules, and a refusal is shown as the API's problem says it. The
// buttons only leave out what the rules never allow the signed-in user
// (kassa.CheckStaffChange): a manager manages cashiers of their own
// locations, an owner everyone but their own role and status.
// Loaded deferred, after console.js: it reads through window.KassaConsole.
(function () {
  'use strict';

  var ROLES = { owner: 'Owner', manager: 'Manager', cashier: 'Cashier', kitchen: 'Kitchen', ops: 'Ops' };
  var $ = function (id) { return document.getElementById(id); };
  var st = { me: null, locations: [], users: [], gen: 0, dlg: null };

  function session() { return window.KassaConsole.session; }
  function call(method, path, body) { return session().api(method, path, body); }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // --- reading ---------------------------------------------------------------

  // load reads who is signed in, the org's locations and its staff, then
  // draws the table; a failure is said in the section (the console's
  // banner says when the edge itself does not answer).
  function load() {
    var gen = ++st.gen, status = $('staff-status').value;
    return Promise.all([
      call('GET', '/auth/me'),
      call('GET', '/locations?limit=200'),
      call('GET', '/users?limit=200' + (status ? '&status=' + status : ''))
    ]).then(function (r) {
      if (gen !== st.gen) return;
      st.me = r[0].data;
      st.locations = r[1].data || [];
      st.users = (r[2].data || []).sort(function (a, b) { return (a.name || a.email).localeCompare(b.name || b.email); });
      render();
    }, function (e) {
      if (gen !== st.gen || e.ended) return;
      var body = $('staff-rows');
      body.textContent = '';
      var tr = el('tr', null, 'none');
      var td = el('td', e.status === 403 ? 'Only an owner or a manager sees the staff.' : 'Cannot read the staff: ' + e.message);
      td.colSpan = 6;
      tr.appendChild(td);
      body.appendChild(tr);
    });
  }

  function locationNames(ids) {
    if (!ids || !ids.length) return 'Every location';
    return ids.map(function (id) {
      var l = st.locations.find(function (x) { return x.id === id; });
      return l ? l.name : id;
    }).join(', ');
  }

  // covers mirrors kassa.Staff.Covers: an empty list is every location.
  function covers(who, ids) {
    var mine = who.location_ids || [];
    if (!mine.length) return true;
    return ids.length > 0 && ids.every(function (id) { return mine.indexOf(id) >= 0; });
  }

  // manages says whether the rules let the signed-in user manage u's
  // account (not only a PIN): the buttons follow it, the API decides.
  function manages(u) {
    var me = st.me;
    if (!me) return false;
    if (me.role === 'owner') return true;
    return me.role === 'manager' && u.role === 'cashier' && (u.location_ids || []).length > 0 && covers(me, u.location_ids);
  }

  // --- the table -------------------------------------------------------------

  function render() {
    var me = st.me, manager = me.role === 'manager';
    $('staff-add').textContent = manager ? 'Add a cashier' : 'Add staff';
    $('staff-rules').textContent = manager ?
      'You manage the cashiers of ' + ((me.location_ids || []).length ? locationNames(me.location_ids) : 'every location') + ': add them, change their name or locations, reset a password or PIN, deactivate them. Other staff are managed by an owner.' :
      'As an owner you manage every account, but not your own role or status (another owner does).';
    var body = $('staff-rows');
    body.textContent = '';
    if (!st.users.length) {
      var none = el('tr', null, 'none');
      var td = el('td', 'Nobody here.');
      td.colSpan = 6;
      none.appendChild(td);
      body.appendChild(none);
    }
    st.users.forEach(function (u) { body.appendChild(row(u)); });
  }

  function row(u) {
    var tr = el('tr', null, u.is_active ? '' : 'inactive');
    tr.dataset.id = u.id;
    tr.dataset.email = u.email;
    var who = el('td', null, 'who');
    who.dataset.label = 'Name';
    who.appendChild(el('strong', u.name || u.email));
    who.appendChild(el('small', u.email));
    tr.appendChild(who);
    cellOf(tr, 'Role', ROLES[u.role] || u.role, 'role');
    cellOf(tr, 'Locations', locationNames(u.location_ids), 'locs');
    cellOf(tr, 'Status', u.is_active ? 'Active' : 'Deactivated', u.is_active ? 'state on' : 'state off');
    cellOf(tr, 'PIN', u.has_pin ? 'Set' : '—', 'pin');
    var acts = el('td', null, 'acts');
    var self = st.me && u.id === st.me.id, may = manages(u);
    if (may) {
      button(acts, 'Edit', 'edit', function () { open('edit', u); });
      button(acts, 'Password', 'password', function () { open('password', u); });
    }
    if (may || self) button(acts, 'PIN', 'pin', function () { open('pin', u); });
    if (may && !self) {
      if (u.is_active) button(acts, 'Deactivate', 'deactivate', function () { open('deactivate', u); }, 'danger');
      else button(acts, 'Reactivate', 'reactivate', function () { reactivate(u); });
    }
    if (!acts.childNodes.length) acts.appendChild(el('small', 'Managed by an owner', 'muted'));
    tr.appendChild(acts);
    return tr;
  }

  function cellOf(tr, label, text, cls) {
    var td = el('td', text, cls);
    td.dataset.label = label;
    tr.appendChild(td);
  }

  function button(box, text, act, fn, cls) {
    var b = el('button', text, 'small ' + (cls || 'quiet'));
    b.type = 'button';
    b.dataset.act = act;
    b.addEventListener('click', fn);
    box.appendChild(b);
  }

  // said tells what was done; with the hub link down (the console's
  // banner) it says where the change waits.
  function said(text) {
    var offline = text && $('status').dataset.state === 'offline';
    $('staff-msg').textContent = text + (offline ? ' Saved at this store: head office gets it when the link is back.' : '');
  }

  // --- the dialog: add, edit, password, PIN, deactivate ----------------------

  var TITLES = { add: 'Add staff', edit: 'Edit', password: 'Reset the password', pin: 'PIN for the till', deactivate: 'Deactivate' };
  var OK = { add: 'Add', edit: 'Save', password: 'Reset the password', pin: 'Set the PIN', deactivate: 'Deactivate' };

  function open(mode, u) {
    st.dlg = { mode: mode, user: u };
    var manager = st.me && st.me.role === 'manager';
    $('staff-dlg-h').textContent = mode === 'add' ? (manager ? 'Add a cashier' : 'Add staff') :
      TITLES[mode] + ' · ' + (u.name || u.email);
    $('staff-dlg').dataset.mode = mode;
    $('staff-dlg-what').textContent = {
      add: 'They sign in at the till with their e-mail and password, then switch in with their PIN.',
      edit: u && u.email,
      password: 'Their sessions at this store end; they sign in with the new password.',
      pin: 'The PIN switches them in at the till (4-8 digits). A new PIN ends a lockout after wrong tries.',
      deactivate: u ? (u.name || u.email) + ' can no longer sign in, here or at head office, and is signed out now. You can reactivate them later.' : ''
    }[mode];
    $('staff-f-account').hidden = mode !== 'add' && mode !== 'edit';
    $('staff-email-l').hidden = mode !== 'add';
    $('staff-password-l').hidden = mode !== 'add' && mode !== 'password';
    $('staff-pin-l').hidden = mode !== 'add' && mode !== 'pin';
    $('staff-pin-clear').hidden = !(mode === 'pin' && u.has_pin);
    $('staff-ok').textContent = OK[mode];
    $('staff-ok').className = mode === 'deactivate' ? 'danger' : '';
    $('staff-name').value = u ? u.name : '';
    $('staff-email').value = $('staff-password').value = $('staff-pin').value = '';
    $('staff-pin-l').firstChild.textContent = mode === 'add' ? 'PIN for the till (4-8 digits, optional) ' : 'PIN for the till (4-8 digits) ';
    roles(u);
    locations(u);
    $('staff-error').textContent = '';
    $('staff-dlg').showModal();
    var first = $('staff-dlg').querySelector('label:not([hidden]) input, #staff-ok');
    if (first) first.focus();
  }

  // roles offers what the signed-in user may give: a manager, cashier.
  function roles(u) {
    var sel = $('staff-role');
    sel.textContent = '';
    var offer = st.me && st.me.role === 'owner' ? Object.keys(ROLES) : ['cashier'];
    if (u && offer.indexOf(u.role) < 0) offer = offer.concat(u.role);
    offer.forEach(function (r) {
      var o = el('option', ROLES[r] || r);
      o.value = r;
      sel.appendChild(o);
    });
    sel.value = u ? u.role : 'cashier';
  }

  // locations ticks where u works; a new account starts at the locations
  // the manager works at, or the org's only one.
  function locations(u) {
    var box = $('staff-locs');
    [].slice.call(box.querySelectorAll('label, p')).forEach(function (x) { x.remove(); });
    var me = st.me || {}, mine = me.location_ids || [];
    var ticked = u ? u.location_ids || [] : mine.length ? mine : st.locations.length === 1 ? [st.locations[0].id] : [];
    st.locations.forEach(function (l) {
      if (me.role !== 'owner' && mine.length && mine.indexOf(l.id) < 0 && ticked.indexOf(l.id) < 0) return;
      var lab = el('label', null, 'check');
      var c = el('input');
      c.type = 'checkbox';
      c.value = l.id;
      c.checked = ticked.indexOf(l.id) >= 0;
      lab.appendChild(c);
      lab.appendChild(document.createTextNode(' ' + l.name));
      box.appendChild(lab);
    });
    box.appendChild(el('p', me.role === 'owner' ? 'None ticked: every location.' : 'A cashier works at the locations ticked.', 'hint'));
  }

  function ticked() {
    return [].slice.call($('staff-locs').querySelectorAll('input:checked')).map(function (c) { return c.value; });
  }

  // submit sends what the dialog's mode changes; the API's answer decides,
  // its problem is shown in the dialog and nothing is changed.
  function submit(ev) {
    ev.preventDefault();
    var d = st.dlg, u = d.user, pin = $('staff-pin').value.trim();
    var ok = $('staff-ok');
    ok.disabled = true;
    $('staff-error').textContent = '';
    var done = {
      add: function () {
        return call('POST', '/users', { email: $('staff-email').value.trim(), name: $('staff-name').value.trim(), role: $('staff-role').value,
          password: $('staff-password').value, location_ids: ticked() }).then(function (r) {
          if (!pin) return r;
          // The account exists: a refused PIN leaves it without one, said so.
          return call('PUT', '/users/' + r.data.id + '/pin', { pin: pin }).catch(function (e) {
            $('staff-dlg').close();
            load();
            open('pin', r.data);
            e.message = 'Added ' + (r.data.name || r.data.email) + ', but the PIN was not set: ' + e.message;
            throw e;
          });
        });
      },
      edit: function () {
        return call('PATCH', '/users/' + u.id, { name: $('staff-name').value.trim(), role: $('staff-role').value, location_ids: ticked() });
      },
      password: function () { return call('POST', '/users/' + u.id + '/password', { password: $('staff-password').value }); },
      pin: function () { return call('PUT', '/users/' + u.id + '/pin', { pin: pin }); },
      deactivate: function () { return call('POST', '/users/' + u.id + '/deactivate'); }
    }[d.mode];
    done().then(function (r) {
      $('staff-dlg').close();
      said(sentence(d.mode, r.data));
      return load();
    }, function (e) {
      $('staff-error').textContent = e.message;
    }).then(function () { ok.disabled = false; });
  }

  function sentence(mode, u) {
    var who = u.name || u.email;
    return {
      add: 'Added ' + who + ' (' + (ROLES[u.role] || u.role) + ', ' + locationNames(u.location_ids) + ')' + (u.has_pin ? ' with a PIN.' : '.'),
      edit: 'Saved ' + who + '.',
      password: 'The password of ' + who + ' is reset.',
      pin: 'The PIN of ' + who + ' is set.',
      deactivate: who + ' is deactivated: they cannot sign in.'
    }[mode];
  }

  function clearPIN() {
    var u = st.dlg.user;
    $('staff-error').textContent = '';
    call('DELETE', '/users/' + u.id + '/pin').then(function (r) {
      $('staff-dlg').close();
      said('The PIN of ' + (r.data.name || r.data.email) + ' is removed.');
      return load();
    }, function (e) { $('staff-error').textContent = e.message; });
  }

  function reactivate(u) {
    said('');
    call('POST', '/users/' + u.id + '/reactivate').then(function (r) {
      said((r.data.name || r.data.email) + ' is active again: they can sign in.');
      return load();
    }, function (e) { said('Not reactivated: ' + e.message); });
  }

  // --- start ------------------------------------------------------------------

  $('staff-add').addEventListener('click', function () { open('add', null); });
  $('staff-status').addEventListener('change', load);
  $('staff-form').addEventListener('submit', submit);
  $('staff-cancel').addEventListener('click', function () { $('staff-dlg').close(); });
  $('staff-pin-clear').addEventListener('click', clearPIN);
  // The section reads the staff whenever the console is shown (after a
  // sign-in, or at once when the tab is still signed in).
  var shown = function () { if (!$('console').hidden && session().auth) { said(''); load(); } };
  new MutationObserver(shown).observe($('console'), { attributes: true, attributeFilter: ['hidden'] });
  shown();
})();
