// Gift cards at the till (docs/giftcards.md, "Sold at the till"): the
// cashier sells a new card (its amount, and the code of the card handed
// over, scanned or typed; none: the edge makes one up) or reloads a card
// (its code, looked up to show what it holds, then the amount) as a line
// of the sale, so the money is taken by the sale's tenders and lands in
// the drawer. The edge prices it (untaxed, in the total, within the org's
// gift_card_max_balance) and activates or credits the card when the sale
// completes. The till's own module: till.js hands it its helpers.

let t; // the till's helpers: sale(), changed(), money(), el(), $(), minor(), api(), openDialog(), closeDialogs(), editable()
let kind = 'issue';
let looked = null; // the card a reload was looked up as

// initGifts wires the gift card dialog to the till.
export function initGifts(till) {
  t = till;
  const $ = t.$;
  $('gift-btn').onclick = () => openGift('issue');
  for (const b of document.querySelectorAll('[data-gift]')) b.onclick = () => setKind(b.dataset.gift);
  $('giftl-code').addEventListener('change', () => { if (kind === 'reload') lookUp(); });
  $('giftl-code').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); if (kind === 'reload') lookUp(); else $('giftl-amount').focus(); } });
  $('giftl-amount').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); addGift(); } });
  $('giftl-ok').onclick = addGift;
}

// giftLines are the sale's gift card lines.
function giftLines() { return t.sale().gifts || []; }

// giftCount is how many gift card lines the sale has.
export function giftCount() { return giftLines().length; }

// giftBody is the sale's gift card lines as POST /orders takes them.
export function giftBody() {
  return giftLines().map((g) => (g.code ? { type: g.type, amount: g.amount, code: g.code } : { type: g.type, amount: g.amount }));
}

// masked is a code as the cart shows it.
function masked(code) { return code ? '•••• ' + code.replace(/[\s-]/g, '').toUpperCase().slice(-4) : '(new code)'; }

// renderGiftLines adds the sale's gift card lines to the cart list.
export function renderGiftLines(ul) {
  const { el } = t;
  giftLines().forEach((g, i) => {
    const what = g.type === 'reload' ? 'Gift card reload' : 'Gift card';
    const li = el('li', { className: 'gift' },
      el('span', { className: 'qty', textContent: '1×' }),
      el('span', { className: 'name' }, what, el('small', { textContent: masked(g.code) + ' · no tax' })),
      el('span', { className: 'amt', textContent: t.money(g.amount) }));
    li.dataset.line = what;
    const x = el('button', { type: 'button', className: 'void', textContent: '×', title: 'Void line' });
    x.setAttribute('aria-label', 'Void ' + what);
    x.onclick = () => {
      if (!t.editable()) return;
      t.sale().gifts = giftLines().filter((_, k) => k !== i);
      t.changed();
    };
    li.append(x);
    ul.append(li);
  });
}

function openGift(k) {
  if (!t.editable()) return;
  const $ = t.$;
  $('giftl-code').value = $('giftl-amount').value = '';
  looked = null;
  setKind(k);
  t.openDialog('gift');
  $('giftl-code').focus();
}

function setKind(k) {
  const $ = t.$;
  kind = k;
  looked = null;
  for (const b of document.querySelectorAll('[data-gift]')) b.setAttribute('aria-pressed', String(b.dataset.gift === k));
  $('giftl-code-l').firstChild.textContent = k === 'reload' ? 'Code of the card to reload ' : 'Code of the card handed over (blank: a new code) ';
  $('giftl-ok').textContent = k === 'reload' ? 'Add the reload' : 'Add the card';
  $('giftl-info').textContent = $('giftl-msg').textContent = '';
  const chips = $('giftl-chips');
  chips.replaceChildren();
  for (const v of [2500, 5000, 10000]) {
    const b = t.el('button', { type: 'button', textContent: t.money(v) });
    b.onclick = () => { $('giftl-amount').value = (v / 100).toFixed(2); };
    chips.append(b);
  }
}

// lookUp shows what the card to reload holds, and whether it takes a reload.
async function lookUp() {
  const $ = t.$;
  const code = $('giftl-code').value.trim();
  looked = null;
  $('giftl-info').textContent = $('giftl-msg').textContent = '';
  if (!code) return;
  try {
    const g = (await t.api('GET', '/gift-cards/lookup?code=' + encodeURIComponent(code))).data;
    looked = g;
    $('giftl-info').textContent = 'Holds ' + t.money(g.balance, g.currency) + (g.status !== 'active' ? ' · ' + g.status + ': it takes no reload' : '');
    if (g.status === 'active') $('giftl-amount').focus();
  } catch (e) { $('giftl-msg').textContent = e.status === 404 ? 'No gift card has that code.' : e.message; }
}

// addGift adds the line to the sale; the edge checks it as it prices the sale.
async function addGift() {
  const $ = t.$;
  const amount = t.minor($('giftl-amount').value);
  const code = $('giftl-code').value.trim().toUpperCase();
  if (!amount || amount <= 0) { $('giftl-msg').textContent = 'Enter the amount to put on the card.'; return; }
  if (kind === 'reload') {
    if (!looked) await lookUp();
    if (!looked) return;
    if (looked.status !== 'active') { $('giftl-msg').textContent = 'This card is ' + looked.status + ': it takes no reload.'; return; }
  }
  const s = t.sale();
  s.gifts = giftLines().concat([{ type: kind, amount, code: code || null }]);
  t.closeDialogs();
  t.changed();
}
