// Returns and exchanges at the till (docs/returns.md, docs/till.md): the
// refund dialog, found by the receipt's scanned number, takes lines back
// each restocked or not, to the original tender or to the customer's
// store credit (POST /returns), or starts an exchange: the lines to give
// back ride with the new sale rung up by touch, and Pay sends both in one
// POST /exchanges; what the new sale costs beyond the return is then paid
// by any tender. The page computes no money: every amount shown is the
// edge's answer.

// restockBox is a line's "restock" check box, on unless the cashier
// takes it off (damaged goods); r.restock keeps the choice by line id.
export function restockBox(r, line, el) {
  r.restock = r.restock || {};
  if (!(line.id in r.restock)) r.restock[line.id] = true;
  const box = el('input', { type: 'checkbox', checked: r.restock[line.id] });
  box.onchange = () => { r.restock[line.id] = box.checked; };
  box.setAttribute('aria-label', 'Restock ' + line.name);
  return el('label', { className: 'check restock' }, box, 'restock');
}

// chosen is the return's lines: the quantities picked, each with its
// restock choice.
export function chosen(r) {
  return Object.entries(r.qty).filter(([, q]) => q > 0)
    .map(([id, q]) => ({ line_item_id: id, quantity: q, restock: !r.restock || r.restock[id] !== false }));
}

// destination is where the dialog sends the money: original or store_credit.
export function destination(doc) {
  const on = doc.querySelector('input[name="return-to"]:checked');
  return on ? on.value : 'original';
}

// returned says what a return did, as the edge answered it.
export function returned(ret, money) {
  const parts = [];
  if (ret.to_tender) parts.push(`${money(ret.to_tender)} to the original tender`);
  if (ret.to_credit) parts.push(`${money(ret.to_credit)} to store credit` + (ret.store_credit ? ` (balance ${money(ret.store_credit.balance)})` : ''));
  return `Returned ${money(ret.amount)}: ${parts.join(', ')}`;
}

// exchangeNote is the cart's line about the exchange in progress.
export function exchangeNote(x) {
  return `Exchange for order ${x.number}: ${x.names.join(', ')} coming back. Ring up the new items, then Pay.`;
}

// exchangeBody is POST /exchanges' body: the lines coming back and the
// sale's lines (body is the order the till would create).
export function exchangeBody(x, b, registerID) {
  const out = { order_id: x.orderId, return_lines: x.lines, line_items: b.line_items, register_id: registerID, reason: 'till exchange' };
  if (b.customer_id) out.customer_id = b.customer_id;
  if (x.approval) out.approval_token = x.approval; // a manager's sign-in, above the cashier's refund limit
  return out;
}
