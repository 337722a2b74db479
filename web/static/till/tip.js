// The till's tip entry (docs/tips.md): on the pay screen, for cash and
// card, the customer's tip by touch — No tip, a preset percentage of the
// amount being taken (10, 15, 20 %), or a custom amount typed in. The
// page sends it as the payment's tip; the edge checks it against the
// org's tip_max_percent and keeps it out of the order's total and tax.
// A card terminal may add its own tip instead (the payment answers it).

const PRESETS = [1000, 1500, 2000]; // basis points

// tipChooser draws the chooser into root. fmt: { money(minor), minor(text) }.
// onChange is called after every choice. It returns { of(amount): the tip
// in minor units for a payment of amount (null: a custom amount that is
// not one), reset(), show(on) }.
export function tipChooser(root, fmt, onChange) {
  let pick = 0; // basis points, or 'custom'
  const label = document.createElement('span');
  label.className = 'tip-label';
  label.textContent = 'Tip';
  const chips = document.createElement('div');
  chips.className = 'chips tip-chips';
  const custom = document.createElement('input');
  custom.id = 'tip-custom';
  custom.inputMode = 'decimal';
  custom.autocomplete = 'off';
  custom.placeholder = 'Tip amount';
  custom.setAttribute('aria-label', 'Custom tip amount');
  custom.hidden = true;
  const shown = document.createElement('p');
  shown.id = 'tip-shown';
  shown.className = 'muted';
  const button = (value, text) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.tip = String(value);
    b.textContent = text;
    b.onclick = () => choose(value);
    return b;
  };
  chips.append(button(0, 'No tip'), ...PRESETS.map((bps) => button(bps, bps / 100 + ' %')), button('custom', 'Custom'));
  root.replaceChildren(label, chips, custom, shown);
  custom.oninput = () => onChange();

  function choose(value, quiet) {
    pick = value;
    for (const b of chips.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.tip === String(value)));
    custom.hidden = value !== 'custom';
    if (value === 'custom') custom.focus();
    if (!quiet) onChange();
  }
  function of(amount) {
    if (pick === 'custom') {
      if (!custom.value.trim()) return 0;
      const v = fmt.minor(custom.value);
      return v == null || v < 0 ? null : v;
    }
    return Math.floor((amount * pick + 5000) / 10000); // half up, as the edge rounds money
  }
  choose(0, true);
  return {
    of,
    // describe says what the chosen tip is on a payment of amount.
    describe(amount) {
      const t = of(amount);
      shown.textContent = t == null ? 'Type the tip as an amount' : t ? `Tip ${fmt.money(t)} · with the payment ${fmt.money(amount + t)}` : '';
    },
    reset() { custom.value = ''; choose(0, true); },
    show(on) { root.hidden = !on; },
  };
}
