// Kassa till: a cashier rings up a sale at the edge, over its REST API.
// Every price, discount, tax and total shown is what the edge answers
// (POST /orders/quote while the cart grows, then the order itself); the
// page only adds up nothing. The sale in progress lives in localStorage
// (lines, customer, voucher, the order once created and an
// Idempotency-Key per step), so a reload resumes it without losing or
// doubling anything. See docs/till.md.
import { svg as barcode } from './code128.js';

const $ = (id) => document.getElementById(id);
const SALE = 'kassa.till.sale';
const session = new window.KassaSession({
  storageKey: 'kassa.till.auth', storage: window.localStorage,
  unreachable: 'The edge is not answering: check the till\'s network.',
  onEnded: (e) => showLogin(e.message),
});

const state = { location: null, currency: 'AUD', products: [], cats: [], groups: {}, cat: '', quote: null, order: null, tender: 'cash', refund: null };
let sale = load();

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

// api calls the edge as the cashier, or as the approving manager when the
// sale carries an approval (asApprover).
function api(method, path, body, key, asApprover) {
  const h = key ? { 'Idempotency-Key': key } : undefined;
  if (asApprover && sale.approver) return session.request(method, path, body, sale.approver.token, h);
  return session.api(method, path, body, h);
}

// ---- sign-in and start-up -------------------------------------------------

function showLogin(msg) {
  $('login').hidden = false;
  $('sale').hidden = $('overlay').hidden = true;
  for (const id of ['logout', 'parked-btn', 'refund-btn']) $(id).hidden = true;
  $('who').textContent = '';
  if (msg) $('login-error').textContent = msg;
  $('email').focus();
}

async function start() {
  $('login').hidden = true;
  $('sale').hidden = false;
  for (const id of ['logout', 'parked-btn', 'refund-btn']) $(id).hidden = false;
  try {
    const me = await session.api('GET', '/auth/me');
    $('who').textContent = me.data.name || me.data.email || '';
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
    }
  } catch (e) { /* all offered; the edge refuses a disabled one */ }
  renderCats();
  renderGrid();
  pollLink();
  await resume();
  $('search').focus();
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

// ---- link status ----------------------------------------------------------

async function pollLink() {
  const l = $('link');
  try {
    const st = (await session.api('GET', '/sync/status')).data;
    const wait = st.pending_up ? ` · ${st.pending_up} change${st.pending_up === 1 ? '' : 's'} wait to sync` : ' · all synced';
    l.textContent = (st.connected ? 'Online' : 'Offline: selling from this store') + wait;
    l.className = 'link ' + (st.connected ? 'on' : 'off');
  } catch (e) {
    if (e.ended) return;
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
async function scan(text) {
  text = text.trim();
  if (!text) return;
  if (/^[0-9A-F]{6}-\d{3,}$/i.test(text)) {
    $('search').value = '';
    renderGrid();
    return openRefund(text.toUpperCase());
  }
  try {
    const l = await session.api('GET', '/catalog/products?is_active=true&q=' + encodeURIComponent(text));
    const exact = l.data.find((p) => (p.barcodes || []).includes(text) || p.sku.toLowerCase() === text.toLowerCase());
    const p = exact || (l.data.length === 1 ? l.data[0] : null);
    if (!p) { $('cart-msg').textContent = `Nothing matches "${text}"`; return; }
    $('search').value = '';
    renderGrid();
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
    const q = state.order || (await api('POST', '/orders/quote', body(), null, true)).data;
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
    for (const c of q.campaigns || []) row(c.name || 'Offer', c.amount ? '− ' + money(c.amount) : 'points ×' + c.points_multiplier / 10000, 'offer');
    if (q.discount_total) row('All discounts', '− ' + money(q.discount_total));
    row(q.tax_inclusive ? 'Tax included' : 'Tax', money(q.tax_total));
    row('Total', money(q.total), 'total');
  }
  const c = sale.customer;
  $('customer').textContent = c ? c.name + (c.points != null ? ` · ${c.points} points` : ' · no loyalty account') : '';
  $('customer-btn').textContent = c ? 'Customer' : '+ Customer';
  $('voucher-btn').textContent = sale.voucher ? 'Voucher ' + sale.voucher : 'Voucher';
  $('discount-btn').textContent = sale.discount ? 'Discount ' + discText(sale.discount) : 'Discount';
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
    sale.approver = { token: r.data.accessToken, email: r.data.user.email };
    $('approve-password').value = '';
    const refund = state.refund;
    if (refund) { openDialog('refund'); return refundNow(); }
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
  sale.customer = { id: c.id, name: custName(c), points: null };
  try {
    const a = await session.api('GET', '/loyalty/accounts/customer/' + c.id);
    sale.customer.points = a.data.points_balance;
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
  const o = (await api('POST', '/orders', body(), sale.createKey, true)).data;
  sale.orderId = o.id;
  sale.creating = false;
  save();
  state.order = o;
  return o;
}

async function ensureOrder() {
  if (sale.orderId && state.order) return state.order;
  return createOrder();
}

async function openPay() {
  try {
    await ensureOrder();
  } catch (e) { $('cart-msg').textContent = e.message; return; }
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
  const quick = $('quick');
  quick.replaceChildren();
  const d = due(), unit = 10 ** exponent(), seen = new Set();
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
  let what = { cash: 'Cash', card: 'Card', gift_card: 'Gift card', external: 'Other' }[p.method] || p.method;
  if (p.card_last4) what += ' ····' + p.card_last4;
  if (p.offline) what += ' (offline, forwarded later)';
  const li = el('li', null, el('span', { textContent: what }), el('span', { textContent: money(p.amount) }));
  if (p.method === 'cash' && p.tendered != null) li.append(el('small', { textContent: `tendered ${money(p.tendered)} · change ${money(p.change_due || 0)}` }));
  return li;
}

function setTender(t) {
  state.tender = t;
  for (const b of document.querySelectorAll('[data-tender]')) b.setAttribute('aria-pressed', String(b.dataset.tender === t));
  for (const x of ['cash', 'card', 'gift_card']) $('t-' + x).hidden = x !== t;
}

function amount() {
  const a = minor($('pay-amount').value);
  if (!a || a > due()) { $('pay-msg').textContent = `Enter an amount up to ${money(due())}`; return null; }
  return a;
}

function takeCash() {
  const a = amount();
  if (!a) return;
  const t = $('tendered').value.trim() ? minor($('tendered').value) : a;
  if (t == null || t < a) { $('pay-msg').textContent = 'The cash handed over is less than the amount'; return; }
  pay({ order_id: state.order.id, amount: a, method: 'cash', tendered: t });
}
function takeCard() {
  const a = amount();
  if (a) pay({ order_id: state.order.id, amount: a, method: 'card', card_number: $('card-number').value.trim() });
}
function takeGift() {
  const a = amount();
  if (a) pay({ order_id: state.order.id, amount: a, method: 'gift_card', gift_card_code: $('gift-code').value.trim() });
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
    state.order = (await api('GET', '/orders/' + sale.orderId)).data;
    $('tendered').value = '';
    if (state.order.paid_total >= state.order.total) return complete();
    renderPay();
  } catch (e) {
    if (!e.unreachable) { sale.pending = null; save(); }
    $('pay-msg').textContent = e.message;
  } finally {
    for (const b of document.querySelectorAll('#pay button')) b.disabled = false;
  }
}

async function complete() {
  state.order = (await api('POST', `/orders/${sale.orderId}/complete`, null, sale.completeKey)).data;
  save();
  showReceipt();
}

// ---- the receipt ------------------------------------------------------------------
// Today an on-screen summary built from the order and its payments. A
// numbered, printable and e-mailed receipt (issue 22, later) replaces
// renderReceipt; the flow stays: complete → receipt → new sale.

async function showReceipt() {
  const o = state.order;
  let points = null;
  if (o.customer_id) {
    try { points = (await session.api('GET', '/loyalty/accounts/customer/' + o.customer_id)).data.points_balance; } catch (e) { /* none */ }
  }
  renderReceipt(o, points);
  openDialog('receipt');
  $('new-sale').focus();
}

function renderReceipt(o, points) {
  const box = $('receipt-body');
  const lines = el('ul', { className: 'rlines' }, ...o.line_items.map((l) => el('li', null,
    el('span', { textContent: `${l.quantity}× ${l.name}` + (l.modifiers.length ? ' (' + l.modifiers.map((m) => m.name).join(', ') + ')' : '') }),
    el('span', { textContent: money(l.total) }),
    l.discount ? el('small', { textContent: 'discount − ' + money(l.discount) }) : null)));
  const sums = el('dl', null);
  const row = (k, v, cls) => sums.append(el('dt', { textContent: k, className: cls || '' }), el('dd', { textContent: v, className: cls || '' }));
  row('Subtotal', money(o.subtotal));
  for (const c of o.campaigns || []) if (c.amount) row(c.name || 'Offer', '− ' + money(c.amount));
  if (o.discount_total) row('All discounts', '− ' + money(o.discount_total));
  if (o.voucher_code) row('Voucher', o.voucher_code);
  row(o.tax_inclusive ? `Tax included (${o.tax_rate_bps / 100} %)` : `Tax (${o.tax_rate_bps / 100} %)`, money(o.tax_total));
  row('Total', money(o.total), 'total');
  const change = o.payments.reduce((s, p) => s + (p.status === 'captured' && p.change_due ? p.change_due : 0), 0);
  box.replaceChildren(...[
    el('h2', { textContent: 'Receipt' }),
    el('p', { className: 'muted', textContent: `Order ${o.number} · ${new Date(o.completed_at || o.created_at).toLocaleString()}` }),
    lines, sums,
    el('ul', { className: 'paid' }, ...o.payments.filter((p) => p.status === 'captured' || p.status.includes('refunded')).map(payLine)),
    change ? el('p', { className: 'change', id: 'change', textContent: 'Change due ' + money(change) }) : null,
    o.loyalty_points_earned || points != null ? el('p', { id: 'points', textContent: `Points earned ${o.loyalty_points_earned} · balance ${points ?? '—'}` }) : null,
    o.refunded_total ? el('p', { textContent: 'Refunded ' + money(o.refunded_total) }) : null,
    sale.approver && sale.orderId === o.id ? el('p', { className: 'muted', id: 'approved', textContent: 'Approved by ' + sale.approver.email }) : null,
    barcode(o.number),
    el('p', { className: 'code', textContent: o.number })].filter(Boolean));
}

function newSale() {
  $('quick').replaceChildren();
  $('pay-done').replaceChildren();
  sale = fresh();
  save();
  state.order = state.quote = null;
  state.change = 0;
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
      el('span', { className: 'qty' }, minus, out, plus));
    li.dataset.line = l.name;
    ul.append(li);
  }
  $('refund-order').replaceChildren(el('p', { textContent: `Order ${o.number} · ${o.status} · paid ${money(o.paid_total)} · refunded ${money(o.refunded_total)}` }), ul,
    el('p', { className: 'muted', textContent: 'No quantities chosen: the whole order is refunded.' }));
  $('refund-ok').disabled = !(o.status === 'completed' || o.status === 'partially_refunded');
}

async function refundNow() {
  const r = state.refund;
  const lines = Object.entries(r.qty).filter(([, q]) => q > 0).map(([id, q]) => ({ line_item_id: id, quantity: q }));
  const b = { reason: 'till return', restock: $('refund-restock').checked };
  if (lines.length) b.line_items = lines;
  $('refund-ok').disabled = true;
  try {
    const o = (await api('POST', `/orders/${r.order.id}/refund`, b, r.key, true)).data;
    const last = o.refunds[o.refunds.length - 1];
    const how = last.payments.map((p) => {
      const pm = o.payments.find((x) => x.id === p.payment_id);
      return `${money(p.amount)} to ${pm ? pm.method.replace('_', ' ') : 'payment'}`;
    }).join(', ');
    r.order = o;
    r.qty = {};
    r.key = uuid();
    renderRefund();
    $('refund-msg').textContent = `Refunded ${money(last.amount)}: ${how}`;
  } catch (e) {
    $('refund-msg').textContent = e.message;
    $('refund-ok').disabled = false;
    if (e.status === 403) openDialog('approve');
  }
}

// ---- dialogs and keys ------------------------------------------------------------------

function openDialog(id) {
  $('overlay').hidden = false;
  for (const d of document.querySelectorAll('.dialog')) d.hidden = d.id !== id;
  const f = $(id).querySelector('input:not([type=checkbox]), button.primary');
  if (f && id !== 'receipt') f.focus();
}
function closeDialogs() {
  $('overlay').hidden = true;
  for (const d of document.querySelectorAll('.dialog')) d.hidden = true;
  if (sale.paying && !sale.orderId) sale.paying = false;
  state.refund = null;
  $('search').focus();
}
function openDialogName() { const d = [...document.querySelectorAll('.dialog')].find((x) => !x.hidden); return d && d.id; }

// A keyboard-wedge scanner types its code and Enter; outside a text field
// those keys are collected here and handled like a scan.
let wedge = '';
document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key === 'Escape' && openDialogName() && openDialogName() !== 'receipt' && !(openDialogName() === 'pay' && $('pay-back').hidden)) return closeDialogs();
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
  $('logout').onclick = () => { session.logout(); showLogin(''); };
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
  $('approve-btn').onclick = () => openDialog('approve');
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
  $('take-cash').onclick = takeCash;
  $('take-card').onclick = takeCard;
  $('take-gift').onclick = takeGift;
  $('gift-check').onclick = giftBalance;
  $('pay-back').onclick = () => { sale.paying = false; save(); closeDialogs(); };
  $('new-sale').onclick = newSale;
  $('parked-btn').onclick = openParked;
  $('refund-btn').onclick = () => openRefund('');
  $('refund-find').addEventListener('submit', findRefund);
  $('refund-ok').onclick = refundNow;
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
if (session.auth) start(); else showLogin('');
