// Kassa till: a cashier rings up a sale at the edge, over its REST API.
// Every price, discount, tax and total shown is what the edge answers
// (POST /orders/quote while the cart grows, then the order itself); the
// page only adds up nothing. The sale in progress lives in localStorage
// (lines, customer, voucher, the order once created and an
// Idempotency-Key per step), so a reload resumes it without losing or
// doubling anything. See docs/till.md.
import { svg as barcode } from './code128.js';
import { restockBox, chosen, destination, returned, exchangeNote, exchangeBody } from './returns.js';
import { tipChooser } from './tip.js';

const $ = (id) => document.getElementById(id);
const SALE = 'kassa.till.sale';
const TILL = 'kassa.till.register'; // the register this device is, set up once
const ROSTER = 'kassa.till.roster'; // who signed in here with a password: [{id, name, email}]

const session = new window.KassaSession({
  storageKey: 'kassa.till.auth', storage: window.localStorage,
  unreachable: 'The edge is not answering: check the till\'s network.',
  onEnded: (e) => showSignIn(e.message),
});

const state = { methods: {}, location: null, currency: 'AUD', products: [], cats: [], groups: {}, cat: '', quote: null, order: null, tender: 'cash', refund: null,
  drawer: null, receipt: null, onApproved: null, polling: 0, pinUser: null, locks: {}, lockTimer: 0 };
let sale = load();
let till = loadTill();
const tips = tipChooser($('tip'), { money: (v) => money(v), minor: (s) => minor(s) }, () => renderTip());
function loadTill() { try { return JSON.parse(localStorage.getItem(TILL)); } catch (e) { return null; } }

function uuid() { return crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2); }
function fresh() { return { lines: [], customer: null, voucher: null, discount: null, approver: null, orderId: null, replaces: null, createKey: uuid(), creating: false, pending: null, completeKey: uuid() }; }
function load() { try { return JSON.parse(localStorage.getItem(SALE)) || fresh(); } catch (e) { return fresh(); } }
function save() { localStorage.setItem(SALE, JSON.stringify(sale)); }

// money formats minor units in the org's currency (display only).
function money(v, cur) {
  const f = new Intl.NumberFormat(undefined, { style: 'currency', currency: cur || state.currency });
  const exp = f.resolvedOptions().maximumFractionDigits;
  return f.format(v / 10 ** exp);
}
function exponent() { return new Intl.NumberFormat(undefined, { style: 'currency', currency: state.currency }).resolvedOptions().maximumFractionDigits; }
// minor parses an amount typed in major units ("12.50") to minor units.
function minor(s) {
  s = String(s || '').trim().replace(',', '.');
  if (!/^\d+(\.\d+)?$/.test(s)) return null;
  const [w, f = ''] = s.split('.'), exp = exponent();
  if (f.length > exp) return null;
  return Number(w) * 10 ** exp + Number((f + '000000').slice(0, exp) || 0);
}
function major(v) { return (v / 10 ** exponent()).toFixed(exponent()); }
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

// api calls the edge as the signed-in cashier.
function api(method, path, body, key) {
  const h = key ? { 'Idempotency-Key': key } : undefined;
  return session.api(method, path, body, h);
}

// approved adds the manager's approval of the sale's discount to an order
// body: the order stays the cashier's and records the manager as
// approved_by (docs/till.md).
function approved(b) {
  if (sale.approver) b.approval_token = sale.approver.token;
  return b;
}

// ---- sign-in and start-up -------------------------------------------------

const HEADER = ['logout', 'switch-btn', 'parked-btn', 'refund-btn', 'drawer-btn'];

// signedOut hides the sale and the header's buttons.
function signedOut() {
  $('sale').hidden = $('overlay').hidden = true;
  for (const id of HEADER) $(id).hidden = true;
  $('who').textContent = $('till-name').textContent = '';
  $('grid').replaceChildren(); // drawn again for whoever signs in
}

function showLogin(msg) {
  signedOut();
  $('pinpad').hidden = true;
  $('login').hidden = false;
  $('login-pin').hidden = !roster().length;
  $('email').value = $('password').value = ''; // the next person types their own
  $('login-error').textContent = msg || '';
  $('email').focus();
}

// showSignIn is the PIN screen when someone signed in here before, else
// the e-mail and password form.
function showSignIn(msg) {
  if (roster().length) showPinpad(msg); else showLogin(msg);
}

async function start() {
  $('login').hidden = $('pinpad').hidden = true;
  $('sale').hidden = false;
  for (const id of HEADER) $(id).hidden = false;
  try {
    const me = await session.api('GET', '/auth/me');
    $('who').textContent = me.data.name || me.data.email || '';
    $('who').dataset.user = me.data.id;
    remember(me.data);
    const [locs, cats, prods, groups] = await Promise.all([
      session.api('GET', '/locations?limit=1'), session.api('GET', '/catalog/categories?limit=200'),
      session.api('GET', '/catalog/products?limit=200&is_active=true'), session.api('GET', '/catalog/modifiers/groups?limit=200')]);
    state.location = locs.data[0] && locs.data[0].id;
    state.currency = (locs.data[0] && locs.data[0].currency) || state.currency;
    state.cats = cats.data;
    state.products = prods.data;
    for (const g of groups.data) state.groups[g.id] = g;
  } catch (e) {
    $('cart-msg').textContent = e.message;
    return;
  }
  try { // tenders the org has turned off are not offered
    const m = await session.api('GET', '/payments/methods');
    for (const x of m.data.methods) {
      const b = document.querySelector(`[data-tender="${x.method}"]`);
      if (b) b.hidden = !x.enabled;
      state.methods[x.method] = x.enabled;
    }
  } catch (e) { /* all offered; the edge refuses a disabled one */ }
  renderCats();
  renderGrid();
  if (!state.polling) pollLink();
  if (!(await setUpTill())) return;
  await resume();
  if (!openDialogName() && !state.drawer) openDrawerDialog('');
  else if (!openDialogName()) $('search').focus();
}

// resume picks the sale up where a reload left it: a create or a payment
// in flight is sent again with its Idempotency-Key (the edge answers the
// first result, nothing is doubled); a completed order shows its receipt.
async function resume() {
  try {
    if (!sale.orderId && sale.creating) await createOrder();
    if (sale.orderId) {
      state.order = (await api('GET', '/orders/' + sale.orderId)).data;
      if (sale.pending) await sendPayment(sale.pending);
      if (state.order.status === 'completed' || state.order.status === 'refunded' || state.order.status === 'partially_refunded') return showReceipt();
      if (state.order.status === 'cancelled') { sale = fresh(); save(); }
      else if (state.order.payments.some((p) => p.status === 'captured') || sale.paying) return openPay();
    }
  } catch (e) {
    $('cart-msg').textContent = e.message;
  }
  renderCart();
  requote();
}

// ---- switch user: the roster and the PIN (docs/till.md) ---------------------
// Whoever signs in here with a password joins this till's roster (kept in
// localStorage: ids and names, never a secret). Switch user ends the
// session and shows the roster; a tap on a name and the PIN on the keypad
// sign that person in (POST /auth/pin), so the sales after it are theirs.
// The edge bounds the tries: a 429 locks that person here for its
// Retry-After (shown counting down), and a PIN locked after too many wrong
// tries asks for the password. Sign out also takes the person off the roster.

function roster() { try { return JSON.parse(localStorage.getItem(ROSTER)) || []; } catch (e) { return []; } }
function saveRoster(r) { localStorage.setItem(ROSTER, JSON.stringify(r)); }

function remember(u) {
  const r = roster().filter((x) => x.id !== u.id);
  r.push({ id: u.id, name: u.name || u.email, email: u.email });
  r.sort((a, b) => a.name.localeCompare(b.name));
  saveRoster(r);
}

function forget(id) { saveRoster(roster().filter((x) => x.id !== id)); }

// switchUser ends this person's session and shows the roster; the sale in
// progress stays on the till for whoever signs in next.
function switchUser() {
  session.logout();
  if (!sale.orderId && !sale.creating) { sale.createKey = uuid(); save(); } // keys are per user
  showPinpad('');
}

function signOut() {
  const id = $('who').dataset.user;
  session.logout();
  if (id) forget(id);
  showSignIn('');
}

function showPinpad(msg) {
  signedOut();
  $('login').hidden = true;
  $('pinpad').hidden = false;
  const ul = $('roster');
  ul.replaceChildren(...roster().map((u) => {
    const b = el('button', { type: 'button' }, u.name, el('small', { textContent: u.email }));
    b.dataset.user = u.id;
    b.setAttribute('aria-pressed', 'false');
    b.onclick = () => choosePinUser(u);
    return el('li', null, b);
  }));
  if (!ul.children.length) ul.append(el('li', { className: 'none', textContent: 'Nobody has signed in at this till yet.' }));
  state.pinUser = null;
  $('pin-who').textContent = 'Tap your name';
  $('pin-input').value = '';
  $('pin-input').disabled = $('pin-ok').disabled = true;
  for (const k of $('keys').children) k.disabled = true;
  pinSay(msg || '', '');
}

function pinSay(text, cls) {
  $('pin-error').textContent = text;
  $('pin-error').className = 'error' + (cls ? ' ' + cls : '');
}

function choosePinUser(u) {
  state.pinUser = u;
  for (const b of $('roster').querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.user === u.id));
  $('pin-who').textContent = u.name + ': your PIN';
  $('pin-input').value = '';
  pinSay('', '');
  pinLocked();
}

// pinLocked disables the keypad while the chosen person is locked out
// here, counting the seconds down; false when the keypad is free.
function pinLocked() {
  clearTimeout(state.lockTimer);
  const u = state.pinUser, lock = u && state.locks[u.id];
  const left = lock ? Math.ceil((lock.until - Date.now()) / 1000) : 0;
  const locked = left > 0;
  $('pin-input').disabled = $('pin-ok').disabled = !u || locked;
  for (const k of $('keys').children) k.disabled = !u || locked;
  if (locked) {
    pinSay(`${lock.why}. ${u.name} can try again in ${left} s.`, 'locked');
    state.lockTimer = setTimeout(pinLocked, 1000);
  } else {
    if (lock) { delete state.locks[u.id]; pinSay('', ''); }
    if (u) $('pin-input').focus();
  }
  return locked;
}

function pinKey(k) {
  const input = $('pin-input');
  if (k === 'clear') input.value = '';
  else if (k === 'back') input.value = input.value.slice(0, -1);
  else if (input.value.length < 8) input.value += k;
  input.focus();
}

async function pinSignIn(ev) {
  ev.preventDefault();
  const u = state.pinUser, pin = $('pin-input').value;
  if (!u || pinLocked()) return;
  if (!/^\d{4,8}$/.test(pin)) { pinSay('A PIN is 4 to 8 digits.', ''); return; }
  $('pin-ok').disabled = true;
  try {
    const r = await session.request('POST', '/auth/pin', { user_id: u.id, pin });
    session.save(r.data);
    $('pin-input').value = '';
    pinSay('', '');
    await start();
  } catch (e) {
    $('pin-input').value = '';
    if (e.status === 429) {
      state.locks[u.id] = { until: Date.now() + Math.max(1, e.retryAfter || 1) * 1000, why: e.message.charAt(0).toUpperCase() + e.message.slice(1) };
      pinLocked();
    } else if (e.status === 401 && /locked/i.test(e.message)) {
      pinSay(`${u.name}: ${e.message}.`, 'locked');
    } else if (e.status === 401) {
      pinSay(`Wrong PIN for ${u.name}. Try again.`, '');
    } else pinSay(e.message, '');
    $('pin-ok').disabled = false;
  }
}

function wirePinpad() {
  const keys = $('keys');
  for (const k of ['1', '2', '3', '4', '5', '6', '7', '8', '9', 'clear', '0', 'back']) {
    const b = el('button', { type: 'button', textContent: k === 'clear' ? 'Clear' : k === 'back' ? '⌫' : k, className: k.length > 1 ? 'fn' : '' });
    b.dataset.key = k;
    if (k === 'back') b.setAttribute('aria-label', 'Delete a digit');
    b.onclick = () => pinKey(k);
    keys.append(b);
  }
  $('pin-form').addEventListener('submit', pinSignIn);
  $('pin-password').onclick = () => showLogin('');
  $('login-pin').onclick = () => showPinpad('');
  $('switch-btn').onclick = switchUser;
}

// ---- link status ----------------------------------------------------------

async function pollLink() {
  const l = $('link');
  state.polling = 1;
  try {
    const st = (await session.api('GET', '/sync/status')).data;
    const wait = st.pending_up ? ` · ${st.pending_up} change${st.pending_up === 1 ? '' : 's'} to sync` : ' · all synced';
    l.textContent = (st.connected ? 'Online' : 'Offline, selling here') + wait;
    l.title = st.connected ? 'Connected to head office' : 'No link to head office: sales are kept at this store and sync when the link is back';
    l.className = 'link ' + (st.connected ? 'on' : 'off');
  } catch (e) {
    if (e.ended) { state.polling = 0; return; }
    l.textContent = e.unreachable ? 'The edge is not answering' : 'Link status unknown';
    l.className = 'link off';
  }
  setTimeout(pollLink, 5000);
}

// ---- catalog ----------------------------------------------------------------

function renderCats() {
  const nav = $('cats');
  nav.replaceChildren();
  const all = [{ id: '', name: 'All' }].concat(state.cats);
  for (const c of all) {
    const b = el('button', { type: 'button', textContent: c.name });
    b.dataset.cat = c.id;
    b.setAttribute('aria-pressed', String(state.cat === c.id));
    b.onclick = () => { state.cat = c.id; $('search').value = ''; renderCats(); renderGrid(); };
    nav.append(b);
  }
}

function renderGrid() {
  const q = $('search').value.trim().toLowerCase();
  const grid = $('grid');
  grid.replaceChildren();
  for (const p of state.products) {
    if (state.cat && p.category_id !== state.cat) continue;
    if (q && !p.name.toLowerCase().includes(q) && !p.sku.toLowerCase().includes(q)) continue;
    const b = el('button', { type: 'button', className: 'tile' }, el('span', { className: 'name', textContent: p.name }),
      el('span', { className: 'price', textContent: money(p.base_price) }));
    b.dataset.sku = p.sku;
    b.onclick = () => pick(p);
    grid.append(b);
  }
}

// pick adds a product: straight in when it has no options, else through
// the options dialog.
function pick(p) {
  if (!(p.modifier_group_ids || []).length) return addLine(p, [], 1);
  openMods(p, null);
}

function addLine(p, options, qty) {
  if (!editable()) return;
  const same = sale.lines.find((l) => l.product_id === p.id && !l.discount && l.options.join() === options.join());
  if (same) same.qty += qty;
  else sale.lines.push({ key: uuid(), product_id: p.id, name: p.name, qty, options, discount: null });
  changed();
}

// scan handles what a keyboard-wedge scanner (or the cashier) typed and
// ended with Enter: a receipt's order number opens the refund, a barcode
// or sku adds its product.
// The field is cleared at once: a scanner may type the next code while
// this one is looked up.
async function scan(text) {
  text = text.trim();
  if (!text) return;
  if ($('search').value.trim() === text) { $('search').value = ''; renderGrid(); }
  if (/^[0-9A-F]{6}-\d{3,}$/i.test(text)) return openRefund(text.toUpperCase());
  try {
    const l = await session.api('GET', '/catalog/products?is_active=true&q=' + encodeURIComponent(text));
    const exact = l.data.find((p) => (p.barcodes || []).includes(text) || p.sku.toLowerCase() === text.toLowerCase());
    const p = exact || (l.data.length === 1 ? l.data[0] : null);
    if (!p) { $('cart-msg').textContent = `Nothing matches "${text}"`; return; }
    $('cart-msg').textContent = '';
    pick(p);
  } catch (e) { $('cart-msg').textContent = e.message; }
}

// ---- options and quantity ----------------------------------------------------

let modsFor = null;
function openMods(p, line) {
  modsFor = { p, line, qty: line ? line.qty : 1, chosen: new Set(line ? line.options : []) };
  $('mods-title').textContent = p.name;
  $('mods-ok').textContent = line ? 'Update' : 'Add';
  $('mods-void').hidden = $('mods-disc').hidden = !line;
  const box = $('mods-groups');
  box.replaceChildren();
  for (const gid of p.modifier_group_ids || []) {
    const g = state.groups[gid];
    if (!g) continue;
    if (!line) for (const o of g.options) if (o.is_default) modsFor.chosen.add(o.id);
    const row = el('div', { className: 'chips' });
    for (const o of g.options) {
      const label = o.name + (o.price_adjustment ? ' +' + money(o.price_adjustment) : '');
      const b = el('button', { type: 'button', textContent: label });
      b.dataset.option = o.name;
      const mark = () => b.setAttribute('aria-pressed', String(modsFor.chosen.has(o.id)));
      b.onclick = () => {
        if (modsFor.chosen.has(o.id)) modsFor.chosen.delete(o.id);
        else {
          if (g.max_selections === 1) for (const x of g.options) modsFor.chosen.delete(x.id);
          modsFor.chosen.add(o.id);
        }
        for (const x of row.children) x.dispatchEvent(new Event('mark'));
      };
      b.addEventListener('mark', mark);
      mark();
      row.append(b);
    }
    box.append(el('h3', { textContent: g.name }), row);
  }
  $('mods-qty').textContent = modsFor.qty;
  openDialog('mods');
}

function modsQty(d) { modsFor.qty = Math.max(1, modsFor.qty + d); $('mods-qty').textContent = modsFor.qty; }

function modsOK() {
  const { p, line, qty, chosen } = modsFor;
  const options = [...chosen];
  closeDialogs();
  if (line) { line.qty = qty; line.options = options; changed(); } else addLine(p, options, qty);
}

function voidLine() {
  if (!editable()) return;
  sale.lines = sale.lines.filter((l) => l !== modsFor.line);
  closeDialogs();
  changed();
}

// ---- the cart and its quote ----------------------------------------------------

// editable: lines change only before any payment is taken.
function editable() {
  if (state.order && state.order.payments.some((p) => p.status === 'captured')) {
    $('cart-msg').textContent = 'Payments are taken: finish this sale, or refund it afterwards.';
    return false;
  }
  return true;
}

// changed: the cart differs from the order created for it, if any, so that
// order is replaced (cancelled when the new one is created) and the cart
// priced again.
function changed() {
  if (sale.orderId) { sale.replaces = sale.orderId; sale.orderId = null; state.order = null; sale.createKey = uuid(); }
  save();
  renderCart();
  requote();
}

function body() {
  const b = { location_id: state.location, channel: 'pos', line_items: sale.lines.map((l) => {
    const it = { product_id: l.product_id, quantity: l.qty, modifier_option_ids: l.options };
    if (l.discount) it.discount = l.discount;
    return it;
  }) };
  if (sale.customer) b.customer_id = sale.customer.id;
  if (sale.voucher) b.voucher_code = sale.voucher;
  if (sale.discount) b.discount = sale.discount;
  return b;
}

let quoteSeq = 0;
async function requote() {
  const seq = ++quoteSeq;
  $('approve-btn').hidden = true;
  if (!sale.lines.length) { state.quote = null; $('cart-msg').textContent = ''; return renderCart(); }
  try {
    const q = state.order || (await api('POST', '/orders/quote', approved(body()))).data;
    if (seq !== quoteSeq) return;
    state.quote = q;
    $('cart-msg').textContent = '';
  } catch (e) {
    if (seq !== quoteSeq) return;
    state.quote = null;
    $('cart-msg').textContent = e.message;
    $('approve-btn').hidden = e.status !== 403;
  }
  renderCart();
}

function renderCart() {
  const ul = $('lines');
  ul.replaceChildren();
  const q = state.quote;
  sale.lines.forEach((l, i) => {
    const ql = q && q.line_items[i];
    const mods = ql ? ql.modifiers.map((m) => m.name).join(', ') : '';
    const li = el('li', { tabIndex: 0 },
      el('span', { className: 'qty', textContent: l.qty + '×' }),
      el('span', { className: 'name' }, l.name, mods ? el('small', { textContent: mods }) : null,
        ql && ql.discount ? el('small', { className: 'disc', textContent: '− ' + money(ql.discount) + (ql.campaign_discounts.length ? ' (offer)' : '') }) : null),
      el('span', { className: 'amt', textContent: ql ? money(ql.total) : (state.quote === null && $('cart-msg').textContent ? '—' : '…') }));
    li.dataset.line = l.name;
    const open = () => openMods(state.products.find((p) => p.id === l.product_id) || { name: l.name, modifier_group_ids: [] }, l);
    li.onclick = open;
    li.onkeydown = (ev) => { if (ev.key === 'Enter') open(); if (ev.key === 'Delete') { modsFor = { line: l }; voidLine(); } };
    const x = el('button', { type: 'button', className: 'void', textContent: '×', title: 'Void line' });
    x.setAttribute('aria-label', 'Void ' + l.name);
    x.onclick = (ev) => { ev.stopPropagation(); modsFor = { line: l }; voidLine(); };
    li.append(x);
    ul.append(li);
  });
  const dl = $('totals');
  dl.replaceChildren();
  if (q) {
    const row = (k, v, cls) => { dl.append(el('dt', { textContent: k, className: cls || '' }), el('dd', { textContent: v, className: cls || '' })); };
    row('Subtotal', money(q.subtotal));
    const offers = (q.campaigns || []).reduce((s, c) => s + (c.amount || 0), 0);
    for (const c of q.campaigns || []) row(c.name || 'Offer', c.amount ? '− ' + money(c.amount) : 'points ×' + c.points_multiplier / 10000, 'offer');
    if (q.discount_total > offers) row('Discount', '− ' + money(q.discount_total - offers)); // the manual part
    row(q.tax_inclusive ? 'Tax included' : 'Tax', money(q.tax_total));
    row('Total', money(q.total), 'total');
  }
  const c = sale.customer;
  $('customer').textContent = c ? c.name + (c.points != null ? ` · ${c.points} points` : ' · no loyalty account') +
    (c.credit > 0 ? ` · store credit ${money(c.credit)}` : '') : '';
  $('customer-btn').textContent = c ? 'Customer' : '+ Customer';
  $('voucher-btn').textContent = sale.voucher ? 'Voucher ' + sale.voucher : 'Voucher';
  $('discount-btn').textContent = sale.discount ? 'Discount ' + discText(sale.discount) : 'Discount';
  $('exchange-note').hidden = !sale.exchange;
  if (sale.exchange) $('exchange-note').textContent = exchangeNote(sale.exchange);
  $('pay-btn').disabled = !q || !sale.lines.length;
  $('pay-btn').textContent = q ? 'Pay ' + money(q.total) : 'Pay';
}

function discText(d) { return d.type === 'percent' ? d.value / 100 + ' %' : money(d.value); }

// ---- discounts and approval ------------------------------------------------------

let discFor = null; // a line, or null for the order
function openDiscount(line) {
  discFor = line;
  $('disc-title').textContent = line ? 'Discount on ' + line.name : 'Discount on the order';
  const chips = $('disc-chips');
  chips.replaceChildren();
  for (const pct of [5, 10, 15, 20, 50]) {
    const b = el('button', { type: 'button', textContent: pct + ' %' });
    b.onclick = () => setDiscount({ type: 'percent', value: pct * 100 });
    chips.append(b);
  }
  $('disc-amount').value = '';
  openDialog('disc');
}
function setDiscount(d) {
  if (!editable()) return;
  if (discFor) discFor.discount = d; else sale.discount = d;
  closeDialogs();
  changed();
}

async function approve(ev) {
  ev.preventDefault();
  $('approve-error').textContent = '';
  try {
    const r = await session.request('POST', '/auth/login', { email: $('approve-email').value.trim(), password: $('approve-password').value });
    $('approve-password').value = '';
    const then = state.onApproved;
    state.onApproved = null;
    if (then) return then(r.data.accessToken, r.data.user.email);
    sale.approver = { token: r.data.accessToken, email: r.data.user.email };
    closeDialogs();
    changed();
  } catch (e) { $('approve-error').textContent = e.message; }
}

// ---- customer and loyalty --------------------------------------------------------

async function findCustomers() {
  const q = $('cust-q').value.trim();
  const ul = $('cust-list');
  if (q.length < 2) return ul.replaceChildren();
  try {
    const l = await session.api('GET', '/customers?limit=10&q=' + encodeURIComponent(q));
    ul.replaceChildren(...l.data.map((c) => {
      const b = el('button', { type: 'button', textContent: custName(c) + (c.phone ? ' · ' + c.phone : '') + (c.email ? ' · ' + c.email : '') });
      b.onclick = () => attach(c);
      return el('li', null, b);
    }));
  } catch (e) { $('cust-error').textContent = e.message; }
}
function custName(c) { return [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email || c.phone || 'Customer'; }

async function attach(c) {
  sale.customer = { id: c.id, name: custName(c), points: null, credit: c.store_credit || 0 };
  try {
    const a = await session.api('GET', '/loyalty/accounts/customer/' + c.id);
    sale.customer.points = a.data.points_balance;
    // What a point pays, for the Points tender (docs/loyalty.md).
    sale.customer.worth = (await session.api('GET', '/loyalty/programs/' + a.data.program_id)).data.redemption_value;
  } catch (e) { /* no account: shown as such */ }
  closeDialogs();
  changed();
}

async function createCustomer(ev) {
  ev.preventDefault();
  const v = (id) => $(id).value.trim() || undefined;
  try {
    const c = await session.api('POST', '/customers', { first_name: v('cust-first') || '', last_name: v('cust-last') || '', phone: v('cust-phone'), email: v('cust-email') }, { 'Idempotency-Key': uuid() });
    try { await session.api('POST', '/loyalty/accounts', { customer_id: c.data.id }); } catch (e) { /* no single active program */ }
    $('cust-form').reset();
    await attach(c.data);
  } catch (e) { $('cust-error').textContent = e.message; }
}

// ---- the order and its payments ----------------------------------------------------

// createOrder creates the sale's order once (its Idempotency-Key is kept
// with the sale), cancelling the order it replaces.
async function createOrder() {
  if (sale.replaces) {
    try { await api('PATCH', '/orders/' + sale.replaces, { status: 'cancelled' }); } catch (e) { if (e.unreachable) throw e; }
    sale.replaces = null;
  }
  sale.creating = true;
  save();
  if (sale.exchange) return createExchange();
  const o = (await api('POST', '/orders', approved(body()), sale.createKey)).data;
  sale.orderId = o.id;
  sale.creating = false;
  save();
  state.order = o;
  return o;
}

// createExchange sends the exchange in progress (returns.js): the new
// order it answers is the sale's, paid already with the return's value.
async function createExchange() {
  const x = (await api('POST', '/exchanges', exchangeBody(sale.exchange, body(), till.id), sale.createKey)).data;
  sale.orderId = x.order.id;
  sale.creating = false;
  sale.exchange.done = x.return.amount;
  save();
  state.order = x.order;
  return x.order;
}

async function ensureOrder() {
  if (sale.orderId && state.order) return state.order;
  return createOrder();
}

async function openPay() {
  if (!state.drawer) return openDrawerDialog('Open the drawer before taking payment.');
  try {
    await ensureOrder();
  } catch (e) {
    $('cart-msg').textContent = e.message;
    sale.creating = false;
    // An exchange above the cashier's refund limit: a manager approves it
    // (approval_token), and Pay sends it again (docs/returns.md).
    if (e.status === 403 && sale.exchange && !sale.exchange.approval) {
      needManager((token) => { sale.exchange.approval = token; sale.createKey = uuid(); save(); closeDialogs(); openPay(); },
        'This exchange returns more than the cashier\'s refund limit: a manager approves it.');
    }
    return;
  }
  if (state.order.status === 'completed') return showReceipt(); // an exchange its return paid in full
  sale.paying = true;
  save();
  setTender('cash');
  $('pay-msg').textContent = $('gift-balance').textContent = '';
  $('gift-code').value = '';
  renderPay();
  openDialog('pay');
}

function due() { const o = state.order; return Math.max(0, o.total - o.paid_total); }

function renderPay() {
  const o = state.order;
  $('pay-number').textContent = o.number;
  const dl = $('pay-sums');
  dl.replaceChildren(el('dt', { textContent: 'Total' }), el('dd', { textContent: money(o.total) }),
    el('dt', { textContent: 'Paid' }), el('dd', { textContent: money(o.paid_total) }),
    el('dt', { textContent: 'Due', className: 'total' }), el('dd', { id: 'due', textContent: money(due()), className: 'total' }));
  $('pay-done').replaceChildren(...o.payments.filter((p) => p.status === 'captured').map(payLine));
  $('pay-amount').value = major(due());
  $('pay-back').hidden = o.payments.some((p) => p.status === 'captured');
  // Points: offered when the org takes them and the sale's customer has some.
  const c = sale.customer;
  $('tender-points').hidden = !(state.methods.loyalty_points && c && c.points > 0 && c.worth > 0);
  $('tender-credit').hidden = !(state.methods.store_credit !== false && c && c.credit > 0); // docs/returns.md
  renderTip();
}

// renderTip shows the chosen tip and the quick-cash amounts that cover
// what is due and the tip.
function renderTip() {
  const a = minor($('pay-amount').value) || due();
  tips.describe(a);
  const quick = $('quick');
  quick.replaceChildren();
  const d = a + (tips.of(a) || 0), unit = 10 ** exponent(), seen = new Set();
  for (const v of [d, ...[5, 10, 20, 50, 100].map((n) => Math.ceil(d / (n * unit)) * n * unit)]) {
    if (v < d || seen.has(v) || !v) continue;
    seen.add(v);
    const b = el('button', { type: 'button', textContent: v === d ? 'Exact' : money(v) });
    b.dataset.cash = major(v);
    b.onclick = () => { $('tendered').value = major(v); takeCash(); };
    quick.append(b);
  }
}

function payLine(p) {
  let what = tenderName(p.method);
  if (p.card_last4) what += ' ····' + p.card_last4;
  if (p.offline) what += ' (offline, forwarded later)';
  const li = el('li', null, el('span', { textContent: what }), el('span', { textContent: money(p.amount) }));
  if (p.tip) li.append(el('small', { className: 'tip', textContent: `tip ${money(p.tip)}` }));
  if (p.method === 'cash' && p.tendered != null) li.append(el('small', { textContent: `tendered ${money(p.tendered)} · change ${money(p.change_due || 0)}` }));
  return li;
}

function setTender(t) {
  state.tender = t;
  for (const b of document.querySelectorAll('[data-tender]')) b.setAttribute('aria-pressed', String(b.dataset.tender === t));
  for (const x of ['cash', 'card', 'gift_card', 'loyalty_points', 'store_credit']) $('t-' + x).hidden = x !== t;
  tips.show(t === 'cash' || t === 'card');
  if (t === 'loyalty_points') pointsWorth();
  if (t === 'store_credit') creditWorth();
}

// pointsWorth offers the most the customer's points pay of what is due: a
// whole number of points, never rounded by the server.
function pointsWorth() {
  const c = sale.customer, n = Math.min(c.points, Math.floor(due() / c.worth));
  $('points-worth').textContent = `${c.points} points, ${money(c.worth)} each · ${n} pay ${money(n * c.worth)}`;
  $('pay-amount').value = major(n * c.worth);
}

function amount() {
  const a = minor($('pay-amount').value);
  if (!a || a > due()) { $('pay-msg').textContent = `Enter an amount up to ${money(due())}`; return null; }
  return a;
}

// tipOn is the chosen tip on a payment of a (null: not a valid one).
function tipOn(a) {
  const tip = tips.of(a);
  if (tip == null) $('pay-msg').textContent = 'Type the tip as an amount';
  return tip;
}

function takeCash() {
  const a = amount(), tip = a && tipOn(a);
  if (!a || tip == null) return;
  const t = $('tendered').value.trim() ? minor($('tendered').value) : a + tip;
  if (t == null || t < a + tip) { $('pay-msg').textContent = tip ? 'The cash handed over is less than the amount and the tip' : 'The cash handed over is less than the amount'; return; }
  pay({ order_id: state.order.id, amount: a, method: 'cash', tendered: t, ...(tip ? { tip } : {}) });
}
function takeCard() {
  const a = amount(), tip = a && tipOn(a);
  if (a && tip != null) pay({ order_id: state.order.id, amount: a, method: 'card', card_number: $('card-number').value.trim(), ...(tip ? { tip } : {}) });
}
function takeGift() {
  const a = amount();
  if (a) pay({ order_id: state.order.id, amount: a, method: 'gift_card', gift_card_code: $('gift-code').value.trim() });
}
async function takePoints() {
  const a = amount(), c = sale.customer;
  if (!a) return;
  if (a % c.worth) { $('pay-msg').textContent = `Points pay in steps of ${money(c.worth)}`; return; }
  await pay({ order_id: state.order.id, amount: a, method: 'loyalty_points' });
  if (!sale.pending && state.order.payments.some((p) => p.method === 'loyalty_points' && p.amount === a)) {
    c.points -= a / c.worth;
    save();
    if (state.order.paid_total < state.order.total) { renderPay(); setTender('cash'); }
  }
}
// creditWorth offers the most of what is due the customer's store credit
// pays (docs/returns.md).
function creditWorth() {
  const c = sale.customer;
  $('credit-worth').textContent = `Store credit ${money(c.credit)}`;
  $('pay-amount').value = major(Math.min(c.credit, due()));
}
async function takeCredit() {
  const a = amount(), c = sale.customer;
  if (!a) return;
  await pay({ order_id: state.order.id, amount: a, method: 'store_credit' });
  if (!sale.pending && state.order.payments.some((p) => p.method === 'store_credit' && p.amount === a)) {
    c.credit -= a;
    save();
    if (state.order.paid_total < state.order.total) { renderPay(); setTender('cash'); }
  }
}
async function giftBalance() {
  try {
    const g = (await session.api('GET', '/gift-cards/lookup?code=' + encodeURIComponent($('gift-code').value.trim()))).data;
    $('gift-balance').textContent = 'Balance ' + money(g.balance, g.currency) + (g.status !== 'active' ? ' · ' + g.status : '');
    if (g.balance > 0 && g.balance < due()) $('pay-amount').value = major(g.balance);
  } catch (e) { $('gift-balance').textContent = e.message; }
}

// pay takes one payment: the step and its Idempotency-Key are saved before
// sending, so a reload sends the same again (resume) and it counts once.
async function pay(b) {
  b.register_id = till.id; // the drawer it goes into
  sale.pending = { key: uuid(), body: b };
  save();
  await sendPayment(sale.pending);
}

async function sendPayment(step) {
  $('pay-msg').textContent = 'Taking payment…';
  for (const b of document.querySelectorAll('#pay button')) b.disabled = true;
  try {
    const p = (await api('POST', '/payments/initiate', step.body, step.key)).data;
    sale.pending = null;
    save();
    $('pay-msg').textContent = p.status === 'captured' ? (p.change_due ? 'Change due ' + money(p.change_due) : '')
      : 'Not taken: ' + (p.failure_reason || p.status);
    if (p.change_due) state.change = p.change_due;
    if (p.status === 'captured') tips.reset();
    state.order = (await api('GET', '/orders/' + sale.orderId)).data;
    $('tendered').value = '';
    if (state.order.paid_total >= state.order.total) return complete();
    renderPay();
  } catch (e) {
    if (!e.unreachable) { sale.pending = null; save(); }
    $('pay-msg').textContent = e.message;
    if (e.status === 409) readDrawer(); // closed at another device: the till offers to open one
  } finally {
    for (const b of document.querySelectorAll('#pay button')) b.disabled = false;
  }
}

async function complete() {
  state.order = (await api('POST', `/orders/${sale.orderId}/complete`, { register_id: till.id }, sale.completeKey)).data;
  save();
  showReceipt();
}

// ---- the receipt ------------------------------------------------------------------
// The edge's receipt document (GET /orders/:id/receipt): its number (gap-free
// per till), the store, the lines, tax by rate, every tender and the loyalty
// balance. The edge queues the print at this till's printer when the sale
// completes; the page follows it (and e-mails) while it waits, never
// blocking the next sale, and prints again or e-mails on request.

async function showReceipt() {
  await openReceipt(state.order.id, null, '');
}

// openReceipt shows the receipt of an order's sale (refundID null) or of
// one refund; back names the dialog its Close returns to ('' ends the
// sale in progress: New sale).
async function openReceipt(orderID, refundID, back) {
  clearTimeout(state.receipt && state.receipt.timer);
  state.receipt = { orderID, refundID, back, doc: null, timer: 0 };
  $('receipt-body').replaceChildren(el('p', { className: 'muted', textContent: 'Loading the receipt…' }));
  $('new-sale').textContent = back ? 'Close' : 'New sale';
  $('receipt-msg').textContent = $('receipt-email').value = '';
  $('receipt-jobs').replaceChildren();
  $('change').hidden = true;
  openDialog('receipt');
  $('new-sale').focus();
  await loadReceipt();
}

async function loadReceipt() {
  const r = state.receipt;
  if (!r) return;
  clearTimeout(r.timer);
  try {
    const q = r.refundID ? '?refund_id=' + encodeURIComponent(r.refundID) : '';
    const doc = (await api('GET', `/orders/${r.orderID}/receipt${q}`)).data;
    if (state.receipt !== r) return;
    r.doc = doc;
    renderReceipt(doc);
    renderJobs(doc.jobs);
    // Ask again while a job is pending, or until the one just queued shows
    // (a read can come before it on a busy edge).
    if (r.awaiting && doc.jobs.some((j) => j.id === r.awaiting)) r.awaiting = null;
    if (r.awaiting || doc.jobs.some((j) => j.status === 'pending')) r.timer = setTimeout(loadReceipt, 1500);
  } catch (e) {
    if (state.receipt !== r) return;
    $('receipt-msg').textContent = 'Receipt: ' + e.message;
    r.timer = setTimeout(loadReceipt, 5000);
  }
}

function renderReceipt(r) {
  const m = (v) => money(v, r.currency);
  const lines = el('ul', { className: 'rlines' }, ...r.lines.map((l) => el('li', null,
    el('span', { textContent: `${l.quantity}× ${l.name}` }), el('span', { textContent: m(l.total) }),
    l.modifiers.length ? el('small', { textContent: l.modifiers.map((x) => x.name + (x.amount ? ' +' + m(x.amount) : '')).join(', ') }) : null,
    l.discount ? el('small', { textContent: 'discount − ' + m(l.discount) }) : null)));
  const sums = el('dl', null);
  const row = (k, v, cls) => sums.append(el('dt', { textContent: k, className: cls || '' }), el('dd', { textContent: v, className: cls || '' }));
  if (r.kind === 'sale') {
    row('Subtotal', m(r.subtotal));
    let offers = 0;
    for (const c of r.campaigns || []) { row(c.name || 'Offer', '− ' + m(c.amount), 'offer'); offers += c.amount; }
    if (r.discount_total > offers) row('Discount', '− ' + m(r.discount_total - offers));
  }
  for (const t of r.taxes || []) row(`${r.tax_inclusive ? 'Tax included' : 'Tax'} ${t.rate_bps / 100} % of ${m(t.net)}`, m(t.tax));
  row(r.kind === 'refund' ? 'Refunded' : 'Total', m(r.total), 'total');
  if (r.tip_total) row(r.kind === 'refund' ? 'Tips given back' : 'Tips (not in the total)', m(r.tip_total), 'tips');
  const change = r.payments.reduce((s, p) => s + (p.change || 0), 0);
  $('change').hidden = !change;
  $('change').textContent = 'Change due ' + m(change);
  const st = r.store;
  $('receipt-body').replaceChildren(...[
    el('div', { className: 'store' }, el('strong', { textContent: st.name }), st.address ? el('div', { textContent: st.address }) : null,
      st.header ? el('div', { textContent: st.header }) : null, st.tax_id ? el('div', { textContent: 'Tax id ' + st.tax_id }) : null),
    el('p', { className: 'rno' }, el('strong', { id: 'receipt-number', textContent: (r.kind === 'refund' ? 'Refund ' : 'Receipt ') + r.number })),
    el('p', { className: 'muted', textContent: `Order ${r.order_number} · ${new Date(r.issued_at).toLocaleString()}` }),
    lines, sums,
    el('ul', { className: 'paid' }, ...r.payments.map((p) => receiptPayment(p, m))),
    r.loyalty ? el('p', { id: 'points', textContent: `Points earned ${r.loyalty.earned} · balance ${r.loyalty.balance}` }) : null,
    r.reason ? el('p', { textContent: 'Reason: ' + r.reason }) : null,
    sale.approver && sale.orderId === r.order_id && r.kind === 'sale' ? el('p', { className: 'muted', id: 'approved', textContent: 'Approved by ' + sale.approver.email }) : null,
    st.footer ? el('p', { className: 'footer', textContent: st.footer }) : null,
    barcode(r.order_number),
    el('p', { className: 'code', textContent: r.order_number })].filter(Boolean));
}

function receiptPayment(p, m) {
  let what = tenderName(p.method);
  if (p.card) what += ' ' + p.card;
  if (p.gift_card) what += ' ' + p.gift_card;
  const li = el('li', null, el('span', { textContent: what }), el('span', { textContent: m(p.amount) }));
  if (p.tip) li.append(el('small', { className: 'tip', textContent: `tip ${m(p.tip)}` }));
  if (p.tendered != null) li.append(el('small', { textContent: `tendered ${m(p.tendered)} · change ${m(p.change || 0)}` }));
  if (p.gift_card_balance != null) li.append(el('small', { textContent: `left on the card ${m(p.gift_card_balance)}` }));
  return li;
}

// renderJobs says how the receipt's prints and e-mails went: the last
// print (and how many were made), the last e-mail to each address.
function renderJobs(jobs) {
  const last = new Map();
  for (const j of jobs) last.set(j.kind === 'print' ? 'print' : j.email, j);
  const prints = jobs.filter((j) => j.kind === 'print').length;
  $('receipt-jobs').replaceChildren(...[...last.values()].map((j) => {
    const what = j.kind === 'print' ? 'Printer' : 'E-mail to ' + j.email;
    let how = j.kind === 'print' ? 'printing…' : 'waiting to send';
    if (j.status === 'done') how = j.kind === 'print' ? 'printed' + (prints > 1 ? ` (${prints} copies)` : '') : 'sent';
    else if (j.status === 'failed') how = 'failed: ' + j.last_error;
    else if (j.last_error) how = (j.kind === 'print' ? 'not answering, retrying' : 'not sent yet, retrying') + ` (${j.attempts} ${j.attempts === 1 ? 'try' : 'tries'})`;
    const li = el('li', { className: j.status === 'done' ? 'ok' : j.status === 'failed' || j.last_error ? 'bad' : '', textContent: `${what}: ${how}` });
    li.dataset.kind = j.kind;
    li.dataset.status = j.status;
    return li;
  }));
  $('print-btn').textContent = prints ? 'Print again' : 'Print';
  $('email-btn').textContent = jobs.some((j) => j.kind === 'email') ? 'Send again' : 'E-mail';
}

async function printReceipt() {
  const r = state.receipt;
  $('receipt-msg').textContent = '';
  const b = { register_id: till.id };
  if (r.refundID) b.refund_id = r.refundID;
  try {
    r.awaiting = (await api('POST', `/orders/${r.orderID}/receipt/print`, b)).data.id;
  } catch (e) {
    $('receipt-msg').textContent = e.status === 409 ? 'This till has no printer: e-mail the receipt, or show it on the screen.' : e.message;
    return;
  }
  loadReceipt();
}

async function emailReceipt(ev) {
  ev.preventDefault();
  const r = state.receipt, to = $('receipt-email').value.trim();
  $('receipt-msg').textContent = '';
  if (!to) { $('receipt-msg').textContent = 'Type the customer\'s e-mail address'; return; }
  const b = { email: to };
  if (r.refundID) b.refund_id = r.refundID;
  try {
    r.awaiting = (await api('POST', `/orders/${r.orderID}/receipt/email`, b)).data.id;
  } catch (e) {
    $('receipt-msg').textContent = e.message;
    return;
  }
  loadReceipt();
}

function closeReceipt() {
  const r = state.receipt;
  clearTimeout(r && r.timer);
  state.receipt = null;
  if (r && r.back) return openDialog(r.back);
  newSale();
}

function newSale() {
  $('quick').replaceChildren();
  $('pay-done').replaceChildren();
  sale = fresh();
  save();
  state.order = state.quote = null;
  state.change = 0;
  clearTimeout(state.receipt && state.receipt.timer);
  state.receipt = null;
  closeDialogs();
  renderCart();
  $('search').focus();
}

// ---- park and resume -------------------------------------------------------------

async function park() {
  if (!sale.lines.length) return;
  try {
    await ensureOrder();
    newSale();
    $('cart-msg').textContent = 'Parked.';
  } catch (e) { $('cart-msg').textContent = e.message; }
}

async function openParked() {
  const ul = $('parked-list');
  ul.replaceChildren(el('li', { textContent: 'Loading…' }));
  openDialog('parked');
  try {
    const l = await session.api('GET', `/orders?status=open&location_id=${state.location}&limit=50`);
    const mine = l.data.filter((o) => o.channel === 'pos' && o.id !== sale.orderId);
    ul.replaceChildren(...mine.map((o) => {
      const b = el('button', { type: 'button', textContent: `${o.number} · ${o.line_items.map((x) => x.quantity + '× ' + x.name).join(', ')} · ${money(o.total)}` });
      b.dataset.number = o.number;
      b.onclick = () => resumeOrder(o);
      return el('li', null, b);
    }));
    if (!mine.length) ul.replaceChildren(el('li', { textContent: 'No parked orders.' }));
  } catch (e) { ul.replaceChildren(el('li', { textContent: e.message })); }
}

// manualPart is a stored line's manual discount (its order discount's
// share included) as an amount, so a changed resumed order keeps it; the
// campaigns' part is priced again.
function manualPart(l) {
  const v = l.discount - l.campaign_discounts.reduce((s, c) => s + c.amount, 0);
  return v > 0 ? { type: 'amount', value: v } : null;
}

async function resumeOrder(o) {
  if (sale.lines.length && !sale.orderId) await park();
  sale = fresh();
  sale.orderId = o.id;
  sale.voucher = o.voucher_code;
  sale.lines = o.line_items.map((l) => ({ key: uuid(), product_id: l.product_id, name: l.name, qty: l.quantity,
    options: l.modifiers.map((m) => m.option_id), discount: manualPart(l) }));
  if (o.customer_id) {
    try { await attach((await session.api('GET', '/customers/' + o.customer_id)).data); } catch (e) { /* gone */ }
  }
  sale.orderId = o.id;
  sale.replaces = null;
  state.order = o;
  save();
  closeDialogs();
  renderCart();
  requote();
}

// ---- refunds ---------------------------------------------------------------------

function openRefund(number) {
  state.refund = null;
  $('refund-order').replaceChildren();
  $('refund-msg').textContent = '';
  $('refund-msg').classList.remove('ok');
  $('refund-ok').disabled = true;
  $('refund-number').value = number || '';
  openDialog('refund');
  $('refund-number').focus();
  if (number) findRefund();
}

async function findRefund(ev) {
  if (ev) ev.preventDefault();
  const n = $('refund-number').value.trim().toUpperCase();
  $('refund-msg').textContent = '';
  try {
    const l = await session.api('GET', '/orders?number=' + encodeURIComponent(n));
    if (!l.data.length) { $('refund-msg').textContent = `No order ${n}`; return; }
    const o = l.data[0];
    state.refund = { order: o, qty: {}, key: uuid() };
    renderRefund();
  } catch (e) { $('refund-msg').textContent = e.message; }
}

function renderRefund() {
  const o = state.refund.order;
  const ul = el('ul', { className: 'rlines' });
  for (const l of o.line_items) {
    const left = l.quantity - l.refunded_quantity;
    const out = el('output', { textContent: state.refund.qty[l.id] || 0 });
    const step = (d) => { state.refund.qty[l.id] = Math.min(left, Math.max(0, (state.refund.qty[l.id] || 0) + d)); out.textContent = state.refund.qty[l.id]; };
    const minus = el('button', { type: 'button', textContent: '−' }), plus = el('button', { type: 'button', textContent: '+' });
    minus.onclick = () => step(-1);
    plus.onclick = () => step(1);
    const li = el('li', null, el('span', { textContent: `${l.quantity}× ${l.name} · ${money(l.total)}` + (l.refunded_quantity ? ` (${l.refunded_quantity} returned)` : '') }),
      left > 0 ? restockBox(state.refund, l, el) : null, el('span', { className: 'qty' }, minus, out, plus));
    li.dataset.line = l.name;
    ul.append(li);
  }
  const open = o.status === 'completed' || o.status === 'partially_refunded';
  $('refund-order').replaceChildren(...[el('p', { textContent: `Order ${o.number} · ${o.status.replace('_', ' ')} · paid ${money(o.paid_total)} · refunded ${money(o.refunded_total)}` }), ul,
    open ? el('p', { className: 'muted', textContent: 'No quantities chosen: all that is left is refunded.' }) : null].filter(Boolean));
  $('refund-ok').disabled = !open;
  $('exchange-btn').disabled = !open;
  // The sale's receipt, and the last refund's, to reprint or e-mail again.
  const sold = ['completed', 'partially_refunded', 'refunded'].includes(o.status);
  $('refund-sale-receipt').hidden = !sold;
  $('refund-receipt').hidden = !state.refund.last;
}

// refundNow refunds at this till (its drawer pays the cash back, its
// sequence numbers the refund's receipt) as the cashier signed in; above
// their refund limit with the approving manager's sign-in as
// approval_token, so the refund is the cashier's and records the manager
// as approved_by.
async function refundNow(token, approver) {
  const r = state.refund;
  if (chosen(r).length || destination(document) === 'store_credit') return returnNow(token, approver);
  const lines = Object.entries(r.qty).filter(([, q]) => q > 0).map(([id, q]) => ({ line_item_id: id, quantity: q }));
  const b = { reason: 'till return', restock: $('refund-restock').checked, register_id: till.id };
  if (lines.length) b.line_items = lines;
  if (token) { b.approval_token = token; r.key = uuid(); } // another body: another key
  $('refund-ok').disabled = true;
  if (token) openDialog('refund');
  try {
    const o = (await session.api('POST', `/orders/${r.order.id}/refund`, b, { 'Idempotency-Key': r.key })).data;
    const last = o.refunds[o.refunds.length - 1];
    const how = last.payments.map((p) => {
      const pm = o.payments.find((x) => x.id === p.payment_id);
      return `${money(p.amount)} to ${pm ? pm.method.replace('_', ' ') : 'payment'}`;
    }).join(', ');
    r.order = o;
    r.qty = {};
    r.key = uuid();
    r.last = last.id;
    renderRefund();
    $('refund-msg').textContent = `Refunded ${money(last.amount)}: ${how}` + (last.approved_by && approver ? ` · approved by ${approver}` : '');
    $('refund-msg').classList.add('ok');
  } catch (e) {
    $('refund-msg').textContent = e.message;
    $('refund-ok').disabled = false;
    if (e.status === 403 && !token) needManager(refundNow, 'This refund is above the cashier\'s limit: a manager approves it.');
  }
}

// returnNow takes the chosen lines back (each restocked as ticked; none
// chosen: all that is left) to the original tender or store credit
// (POST /returns), as refundNow does a refund.
async function returnNow(token, approver) {
  const r = state.refund;
  let lines = chosen(r);
  if (!lines.length) {
    lines = r.order.line_items.filter((l) => l.quantity > l.refunded_quantity)
      .map((l) => ({ line_item_id: l.id, quantity: l.quantity - l.refunded_quantity, restock: $('refund-restock').checked }));
  }
  const b = { order_id: r.order.id, line_items: lines, refund_to: destination(document), reason: 'till return', register_id: till.id };
  if (token) { b.approval_token = token; r.key = uuid(); }
  $('refund-ok').disabled = true;
  if (token) openDialog('refund');
  try {
    const ret = (await session.api('POST', '/returns', b, { 'Idempotency-Key': r.key })).data;
    Object.assign(r, { order: ret.order, qty: {}, restock: {}, key: uuid(), last: ret.id });
    renderRefund();
    $('refund-msg').textContent = returned(ret, money) + (approver ? ` · approved by ${approver}` : '');
    $('refund-msg').classList.add('ok');
  } catch (e) {
    $('refund-msg').textContent = e.message;
    $('refund-ok').disabled = false;
    if (e.status === 403 && !token) needManager(returnNow, 'This return is above the cashier\'s limit: a manager approves it.');
  }
}

// startExchange begins a new sale carrying the chosen lines back: the
// cashier rings up what the customer takes instead, and Pay sends both.
async function startExchange() {
  const r = state.refund;
  const lines = chosen(r);
  if (!lines.length) { $('refund-msg').textContent = 'Choose what comes back first.'; return; }
  if (sale.lines.length || sale.orderId) { $('refund-msg').textContent = 'Finish or clear the sale in progress first.'; return; }
  const names = lines.map((l) => `${l.quantity}× ${r.order.line_items.find((x) => x.id === l.line_item_id).name}`);
  sale = fresh();
  sale.exchange = { orderId: r.order.id, number: r.order.number, lines, names };
  save();
  if (!r.order.customer_id) { closeDialogs(); return changed(); } // the cashier attaches one: its store credit carries the value
  try {
    await attach((await session.api('GET', '/customers/' + r.order.customer_id)).data);
  } catch (e) { closeDialogs(); changed(); }
}

// ---- the till (register) and its drawer ------------------------------------
// A device is set up once as one of its location's registers (kept in
// localStorage); every payment, completion and refund names it, so the
// drawer's cash and the receipt numbers are this till's (docs/drawers.md,
// docs/receipts.md). The cashier opens the drawer with a counted float,
// pays in and out, records a no-sale, a manager reads the X report, and
// the close is a blind count: the page never shows what is expected until
// the Z report answers.

// The notes and coins Kassa counts by denomination, in minor units, largest
// first: kassa.Denominations (shared/kassa/denomination.go); the edge's
// TestTillCountsTheDenominationsTheAPITakes keeps the two equal. Any other
// currency is counted as one amount.
const DENOMINATIONS = {
  AUD: [10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5],
  NZD: [10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10],
  USD: [10000, 5000, 2000, 1000, 500, 200, 100, 50, 25, 10, 5, 1],
  EUR: [50000, 20000, 10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1],
  GBP: [5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1],
};

// setUpTill makes sure this device knows its register and reads that
// register's open drawer; false while the set-up dialog waits for a choice.
async function setUpTill() {
  let regs;
  try {
    regs = (await session.api('GET', `/registers?location_id=${state.location}&limit=200`)).data.filter((r) => r.is_active);
  } catch (e) { $('cart-msg').textContent = e.message; return false; }
  const mine = till && regs.find((r) => r.id === till.id);
  if (!mine) { showSetup(regs); return false; }
  till = { id: mine.id, name: mine.name };
  localStorage.setItem(TILL, JSON.stringify(till));
  $('till-name').textContent = till.name;
  await readDrawer();
  return true;
}

function showSetup(regs) {
  const ul = $('setup-list');
  ul.replaceChildren(...regs.map((r) => {
    const b = el('button', { type: 'button', textContent: r.name });
    b.dataset.register = r.id;
    b.onclick = () => chooseTill(r);
    return el('li', null, b);
  }));
  if (!regs.length) ul.replaceChildren(el('li', { className: 'muted', textContent: 'This store has no register yet. A manager adds one (POST /registers), then reload this page.' }));
  openDialog('setup');
}

async function chooseTill(r) {
  till = { id: r.id, name: r.name };
  localStorage.setItem(TILL, JSON.stringify(till));
  closeDialogs();
  if (!(await setUpTill())) return;
  await resume();
  if (!openDialogName() && !state.drawer) openDrawerDialog('');
}

async function readDrawer() {
  try {
    state.drawer = (await session.api('GET', `/drawers?register_id=${encodeURIComponent(till.id)}&status=open&limit=1`)).data[0] || null;
  } catch (e) { $('cart-msg').textContent = e.message; }
  $('drawer-btn').textContent = state.drawer ? 'Drawer' : 'Open drawer';
  $('drawer-btn').classList.toggle('warn', !state.drawer);
}

function denomName(v) {
  const exp = exponent();
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: state.currency, minimumFractionDigits: v % 10 ** exp ? exp : 0 }).format(v / 10 ** exp);
}

// counter draws a cash count into box: a row per note and coin (− count +)
// and the running total, or one amount where Kassa has no table for the
// currency. It answers a function returning the count as the API takes it
// (a CashCount), or null when the amount typed is not one.
function counter(box, total) {
  box.replaceChildren();
  const values = DENOMINATIONS[state.currency];
  if (!values) {
    const input = el('input', { inputMode: 'decimal', autocomplete: 'off', id: box.id + '-amount' });
    input.oninput = () => { total.textContent = money(minor(input.value) || 0); };
    box.append(el('label', { textContent: 'Amount counted ' }, input));
    total.textContent = money(0);
    return () => { const v = minor(input.value); return v == null ? null : { amount: v }; };
  }
  const counts = new Map(values.map((v) => [v, 0]));
  const show = () => { let t = 0; for (const [v, n] of counts) t += v * n; total.textContent = money(t); };
  for (const v of values) {
    const input = el('input', { value: '0', inputMode: 'numeric', autocomplete: 'off' });
    input.dataset.value = v;
    input.setAttribute('aria-label', 'How many ' + denomName(v));
    input.onfocus = () => input.select();
    input.oninput = () => { const n = parseInt(input.value, 10); counts.set(v, n > 0 ? n : 0); show(); };
    const step = (d) => { counts.set(v, Math.max(0, counts.get(v) + d)); input.value = counts.get(v); show(); };
    const minus = el('button', { type: 'button', textContent: '−' }), plus = el('button', { type: 'button', textContent: '+' });
    minus.setAttribute('aria-label', 'One less ' + denomName(v));
    plus.setAttribute('aria-label', 'One more ' + denomName(v));
    minus.onclick = () => step(-1);
    plus.onclick = () => step(1);
    const row = el('div', { className: 'denom' }, el('span', { className: 'dv', textContent: denomName(v) }), minus, input, plus);
    row.dataset.value = v;
    box.append(row);
  }
  show();
  return () => {
    const d = [...counts].filter(([, n]) => n > 0).map(([value, count]) => ({ value, count }));
    return d.length ? { denominations: d } : { amount: 0 };
  };
}

let countOf = null; // the open or close dialog's counter
function openDrawerDialog(msg) {
  $('dopen-till').textContent = till ? till.name : '';
  $('dopen-error').textContent = msg || '';
  countOf = counter($('dopen-count'), $('dopen-total'));
  openDialog('dopen');
}

async function openDrawerNow() {
  const float = countOf();
  if (!float) { $('dopen-error').textContent = 'Enter the amount counted'; return; }
  try {
    state.drawer = (await session.api('POST', '/drawers', { register_id: till.id, float })).data;
  } catch (e) {
    $('dopen-error').textContent = e.message;
    if (e.status === 409) await readDrawer();
    return;
  }
  await readDrawer();
  closeDialogs();
  $('cart-msg').textContent = `Drawer open at ${till.name}: float ${money(state.drawer.float)}.`;
}

function openDrawerMenu() {
  if (!state.drawer) return openDrawerDialog('');
  const d = state.drawer;
  $('drawer-title').textContent = 'Drawer · ' + till.name;
  $('drawer-info').textContent = `Open since ${new Date(d.opened_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}` +
    ` by ${d.opened_by_name || 'staff'} · float ${money(d.float)} · business day ${d.business_day}`;
  $('drawer-msg').textContent = '';
  openDialog('drawer');
}

// asManager sends a request as the manager who just approved it (token),
// or as the cashier.
function asManager(method, path, body, token) {
  return token ? session.request(method, path, body, token) : session.api(method, path, body);
}

// needManager asks for a manager's sign-in, then calls then(token, email).
function needManager(then, why) {
  askManager(why);
  state.onApproved = then;
}

// askManager opens the approval dialog, empty: each approval is a sign-in.
function askManager(why) {
  $('approve-why').textContent = why;
  $('approve-error').textContent = $('approve-email').value = $('approve-password').value = '';
  openDialog('approve');
}

let cashKind = '';
function openCash(kind) {
  cashKind = kind;
  $('cash-title').textContent = kind === 'paid-in' ? 'Paid in: cash put into the drawer' : 'Paid out: cash taken from the drawer';
  $('cash-amount').value = $('cash-reason').value = '';
  $('cash-error').textContent = '';
  const chips = $('cash-reasons');
  chips.replaceChildren(...(kind === 'paid-in' ? ['Change top-up', 'Float from the safe'] : ['Supplies', 'Milk delivery', 'Cash to the safe']).map((r) => {
    const b = el('button', { type: 'button', textContent: r });
    b.onclick = () => { $('cash-reason').value = r; };
    return b;
  }));
  openDialog('cash');
}

async function cashNow(ev, token) {
  if (ev) ev.preventDefault();
  const amount = minor($('cash-amount').value), reason = $('cash-reason').value.trim();
  if (!amount) { $('cash-error').textContent = 'Enter the amount'; return; }
  if (!reason) { $('cash-error').textContent = 'Say why (a reason is required)'; return; }
  try {
    await asManager('POST', `/drawers/${state.drawer.id}/${cashKind}`, { amount, reason }, token);
  } catch (e) {
    if (e.status === 403 && !token) return needManager((tok) => cashNow(null, tok), 'A paid-in or paid-out needs a manager.');
    openDialog('cash');
    $('cash-error').textContent = e.message;
    return;
  }
  closeDialogs();
  $('cart-msg').textContent = `${cashKind === 'paid-in' ? 'Paid in' : 'Paid out'} ${money(amount)}: ${reason}`;
}

async function noSale() {
  try {
    await session.api('POST', `/drawers/${state.drawer.id}/no-sale`, { reason: 'no sale' });
    $('drawer-msg').textContent = 'No sale: the drawer opening is recorded.';
  } catch (e) { $('drawer-msg').textContent = e.message; }
}

async function xReport(token) {
  let x;
  try {
    x = (await asManager('GET', `/drawers/${state.drawer.id}/x-report`, null, token)).data;
  } catch (e) {
    if (e.status === 403 && !token) return needManager(xReport, 'The X report is for a manager.');
    openDialog('drawer');
    $('drawer-msg').textContent = e.message;
    return;
  }
  $('xrep-body').replaceChildren(el('p', { className: 'muted', textContent: `${till.name} · business day ${x.drawer.business_day} · at ${new Date(x.at).toLocaleTimeString()}` }),
    ...figures(x, null));
  openDialog('xrep');
}

// figures lists a drawer's totals (an X or a Z report); z adds the count.
function figures(t, z) {
  const dl = el('dl', { className: 'figures' });
  const row = (k, v, cls) => dl.append(el('dt', { textContent: k, className: cls || '' }), el('dd', { textContent: v, className: cls || '' }));
  row('Opening float', money(t.float));
  row('Cash sales', money(t.cash_sales));
  row('Cash handed over', money(t.cash_tendered));
  row('Change given', money(t.change_given));
  if (t.cash_refunds) row('Cash refunds', '− ' + money(t.cash_refunds));
  if (t.paid_in) row('Paid in', money(t.paid_in));
  if (t.paid_out) row('Paid out', '− ' + money(t.paid_out));
  row('Expected in the drawer', money(t.expected), 'total');
  if (z) {
    row('Counted', money(z.counted), 'total');
    row(z.over_short < 0 ? 'Short' : z.over_short > 0 ? 'Over' : 'Balanced', money(Math.abs(z.over_short)), z.over_short < 0 ? 'short' : 'total');
  }
  row('Sales', String(t.sales));
  row('Refunds', String(t.refunds));
  row('No-sale openings', String(t.no_sales));
  const tenders = el('table', { className: 'tenders-t' }, el('thead', null, el('tr', null, ...['Tender', 'Sales', 'Taken', 'Refunded', 'Net'].map((h) => el('th', { textContent: h })))),
    el('tbody', null, ...(t.tenders || []).map((x) => el('tr', null, ...[tenderName(x.method), String(x.count), money(x.sales), money(x.refunds), money(x.net)].map((v) => el('td', { textContent: v }))))));
  return [dl, tenders];
}

function tenderName(m) { return { cash: 'Cash', card: 'Card', gift_card: 'Gift card', external: 'Other', loyalty_points: 'Points', store_credit: 'Store credit' }[m] || m; }

function openClose() {
  $('dclose-note').value = '';
  $('dclose-error').textContent = '';
  countOf = counter($('dclose-count'), $('dclose-total'));
  openDialog('dclose');
}

// closeNow sends the blind count; the answer is the Z report, the first
// time the page sees what was expected.
async function closeNow() {
  const count = countOf();
  if (!count) { $('dclose-error').textContent = 'Enter the amount counted'; return; }
  let z;
  try {
    z = (await session.api('POST', `/drawers/${state.drawer.id}/close`, { count, note: $('dclose-note').value.trim() })).data;
  } catch (e) {
    $('dclose-error').textContent = e.message;
    if (e.status === 409) await readDrawer();
    return;
  }
  await readDrawer();
  $('zrep-title').textContent = `Z report ${z.number} · ${till.name}`;
  $('zrep-body').replaceChildren(el('p', { className: 'muted', textContent: `Business day ${z.business_day} · opened ${new Date(z.opened_at).toLocaleTimeString()} · closed ${new Date(z.closed_at).toLocaleTimeString()}` }),
    ...figures(z, z), ...(z.note ? [el('p', { textContent: 'Note: ' + z.note })] : []));
  openDialog('zrep');
}

// ---- my sales (docs/till.md) ---------------------------------------------------

// openMySales shows the cashier's own figures of today's business day
// (GET /reports/my-sales): the totals, then the rows of one grouping
// (tender, hour or product), every figure as the edge answers it.
async function openMySales(group) {
  const on = document.querySelector('#mysales-by [aria-pressed="true"]');
  const by = group || (on && on.dataset.group) || 'payment_method';
  for (const b of document.querySelectorAll('#mysales-by button')) b.setAttribute('aria-pressed', String(b.dataset.group === by));
  const box = $('mysales');
  box.dataset.state = 'loading';
  $('mysales-msg').textContent = '';
  if (box.hidden) openDialog('mysales');
  try {
    const [all, rows] = await Promise.all([session.api('GET', '/reports/my-sales?group_by=none'), session.api('GET', '/reports/my-sales?group_by=' + by)]);
    renderMySales(all, rows, by);
    box.dataset.group = by;
    box.dataset.state = 'shown';
  } catch (e) {
    box.dataset.state = 'failed';
    $('mysales-msg').textContent = e.message;
  }
}

// col marks a figure's cell with the report's field it shows.
function col(e, k) { e.dataset.col = k; return e; }

function renderMySales(all, rows, by) {
  const t = all.data[0] || { orders: 0, gross: 0, manual_discounts: 0, campaign_discounts: 0, tax: 0, sales: 0, refunds: 0, net: 0 };
  const cur = t.currency || state.currency;
  $('mysales-day').textContent = all.report ? '· business day ' + all.report.date_from : '';
  const dl = $('mysales-sums');
  dl.replaceChildren();
  const row = (k, label, v, cls) => dl.append(el('dt', { textContent: label, className: cls || '' }),
    col(el('dd', { textContent: v, className: cls || '' }), k));
  row('orders', 'Sales', String(t.orders));
  row('gross', 'Before discounts', money(t.gross, cur));
  row('discounts', 'Discounts', money(t.manual_discounts + t.campaign_discounts, cur));
  row('tax', 'Tax included', money(t.tax, cur));
  row('sales', 'Taken', money(t.sales, cur));
  row('refunds', 'Refunded', money(t.refunds, cur));
  row('net', 'Net', money(t.net, cur), 'total');
  const head = { payment_method: 'Tender', hour: 'Hour', product: 'Product' }[by];
  const key = (r) => by === 'payment_method' ? tenderName(r.group) : by === 'hour' ? r.group + ':00' : r.label || r.group;
  const cell = (k, v) => col(el('td', { textContent: v }), k);
  $('mysales-rows').replaceChildren(el('thead', null, el('tr', null, ...[head, 'Sales', 'Taken', 'Refunded', 'Net'].map((h) => el('th', { textContent: h })))),
    el('tbody', null, ...(rows.data.length ? rows.data.map((r) => el('tr', null, el('td', { textContent: key(r) }),
      cell('orders', String(r.orders)), cell('sales', money(r.sales, r.currency)), cell('refunds', money(r.refunds, r.currency)), cell('net', money(r.net, r.currency))))
      : [el('tr', null, el('td', { textContent: 'No sales yet today.', colSpan: 5 }))])));
}

// ---- dialogs and keys ------------------------------------------------------------------

function openDialog(id) {
  $('overlay').hidden = false;
  for (const d of document.querySelectorAll('.dialog')) d.hidden = d.id !== id;
  const f = $(id).querySelector('input:not([type=checkbox]), button.primary');
  if (f && id !== 'receipt') f.focus();
}
function closeDialogs() {
  state.onApproved = null;
  $('overlay').hidden = true;
  for (const d of document.querySelectorAll('.dialog')) d.hidden = true;
  if (sale.paying && !sale.orderId) sale.paying = false;
  state.refund = null;
  $('search').focus();
}
// escapable: Escape closes a dialog but the receipt, the till's set-up,
// the Z report and a payment with money taken.
function escapable(id) {
  return id && !['receipt', 'setup', 'zrep'].includes(id) && !(id === 'pay' && $('pay-back').hidden);
}
function openDialogName() { const d = [...document.querySelectorAll('.dialog')].find((x) => !x.hidden); return d && d.id; }

// A keyboard-wedge scanner types its code and Enter; outside a text field
// those keys are collected here and handled like a scan.
let wedge = '';
document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key === 'Escape' && escapable(openDialogName())) return closeDialogs();
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
  if (ev.key === 'Enter' && wedge) {
    ev.preventDefault();
    const code = wedge;
    wedge = '';
    if (openDialogName() === 'refund') { $('refund-number').value = code; findRefund(); } else if (!openDialogName()) scan(code);
    return;
  }
  if (ev.key.length === 1 && !ev.ctrlKey && !ev.metaKey && !ev.altKey) wedge += ev.key;
});

function wire() {
  session.loginForm(start);
  $('logout').onclick = signOut;
  wirePinpad();
  $('search').addEventListener('input', renderGrid);
  $('search').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); scan($('search').value); } });
  $('mods-minus').onclick = () => modsQty(-1);
  $('mods-plus').onclick = () => modsQty(1);
  $('mods-ok').onclick = modsOK;
  $('mods-void').onclick = voidLine;
  $('mods-disc').onclick = () => { const l = modsFor.line; closeDialogs(); openDiscount(l); };
  $('discount-btn').onclick = () => openDiscount(null);
  $('disc-none').onclick = () => setDiscount(null);
  $('disc-ok').onclick = () => { const v = minor($('disc-amount').value); if (v) setDiscount({ type: 'amount', value: v }); };
  $('approve-btn').onclick = () => askManager('A manager signs in here to approve this sale\'s discount.');
  $('approve').addEventListener('submit', approve);
  $('customer-btn').onclick = () => { $('cust-error').textContent = ''; openDialog('cust'); };
  $('cust-q').addEventListener('input', findCustomers);
  $('cust-form').addEventListener('submit', createCustomer);
  $('cust-detach').onclick = () => { sale.customer = null; closeDialogs(); changed(); };
  $('voucher-btn').onclick = () => { $('vouch-code').value = sale.voucher || ''; openDialog('vouch'); };
  $('vouch').addEventListener('submit', (ev) => { ev.preventDefault(); sale.voucher = $('vouch-code').value.trim().toUpperCase() || null; closeDialogs(); changed(); });
  $('vouch-none').onclick = () => { sale.voucher = null; closeDialogs(); changed(); };
  $('park').onclick = park;
  $('clear').onclick = () => {
    if (!editable()) return;
    if (sale.orderId) api('PATCH', '/orders/' + sale.orderId, { status: 'cancelled' }).catch(() => {});
    newSale();
  };
  $('pay-btn').onclick = openPay;
  for (const b of document.querySelectorAll('[data-tender]')) b.onclick = () => setTender(b.dataset.tender);
  $('pay-amount').addEventListener('input', renderTip);
  $('take-cash').onclick = takeCash;
  $('take-card').onclick = takeCard;
  $('take-gift').onclick = takeGift;
  $('take-points').onclick = takePoints;
  $('take-credit').onclick = takeCredit;
  $('gift-check').onclick = giftBalance;
  $('pay-back').onclick = () => { sale.paying = false; save(); closeDialogs(); };
  $('new-sale').onclick = closeReceipt;
  $('print-btn').onclick = printReceipt;
  $('email-form').addEventListener('submit', emailReceipt);
  $('refund-sale-receipt').onclick = () => openReceipt(state.refund.order.id, null, 'refund');
  $('refund-receipt').onclick = () => openReceipt(state.refund.order.id, state.refund.last, 'refund');
  $('drawer-btn').onclick = openDrawerMenu;
  $('dopen-ok').onclick = openDrawerNow;
  $('paid-in').onclick = () => openCash('paid-in');
  $('paid-out').onclick = () => openCash('paid-out');
  $('cash').addEventListener('submit', (ev) => cashNow(ev, null));
  $('no-sale').onclick = noSale;
  $('x-report').onclick = () => xReport(null);
  $('close-drawer').onclick = openClose;
  $('dclose-ok').onclick = closeNow;
  $('change-till').onclick = () => { closeDialogs(); till = null; setUpTill(); };
  $('zrep-new').onclick = () => openDrawerDialog('');
  $('zrep-done').onclick = closeDialogs;
  $('parked-btn').onclick = openParked;
  // My sales is offered whenever Sign out is: while someone is signed in.
  new MutationObserver(() => { $('mysales-btn').hidden = $('logout').hidden; }).observe($('logout'), { attributes: true, attributeFilter: ['hidden'] });
  $('mysales-btn').onclick = () => openMySales();
  $('mysales-refresh').onclick = () => openMySales();
  for (const b of document.querySelectorAll('#mysales-by button')) b.onclick = () => openMySales(b.dataset.group);
  $('refund-btn').onclick = () => openRefund('');
  $('refund-find').addEventListener('submit', findRefund);
  $('refund-ok').onclick = () => refundNow(null);
  $('exchange-btn').onclick = startExchange;
  for (const b of document.querySelectorAll('.dialog .close')) b.onclick = closeDialogs;
  // A line's discount: a long press or right click on it.
  $('lines').addEventListener('contextmenu', (ev) => {
    const li = ev.target.closest('li');
    if (!li) return;
    ev.preventDefault();
    openDiscount(sale.lines[[...li.parentNode.children].indexOf(li)]);
  });
}

wire();
if (session.auth) start(); else showSignIn('');
