// Code 128 (set B) as an SVG: the order number on the till's receipt, for
// a scanner at the refund desk. Plain ES module, no dependencies.

// The 107 symbol patterns (ISO/IEC 15417), 11 modules each as bits, the
// stop symbol 13.
const P = ('6cc,66c,666,498,48c,44c,4c8,4c4,464,648,644,624,59c,4dc,4ce,5cc,4ec,4e6,672,65c,64e,6e4,674,76e,74c,72c,' +
  '726,764,734,732,6d8,6c6,636,518,458,446,588,468,462,688,628,622,5b8,58e,46e,5d8,5c6,476,776,68e,62e,6e8,6e2,6ee,758,' +
  '746,716,768,762,71a,77a,642,78a,530,50c,4b0,486,42c,426,590,584,4d0,4c2,434,432,612,650,7ba,614,47a,53c,4bc,49e,5e4,' +
  '4f4,4f2,7a4,794,792,6de,6f6,7b6,578,51e,45e,5e8,5e2,7a8,7a2,5de,5ee,75e,7ae,684,690,69c').split(',');
const START_B = 104, STOP = '1100011101011';

// bits returns the modules of text (printable ASCII) as '1' bar, '0' space.
export function bits(text) {
  const codes = [START_B];
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    if (c < 32 || c > 126) throw new Error('Code 128 B: not printable ASCII');
    codes.push(c - 32);
  }
  let sum = START_B;
  for (let i = 1; i < codes.length; i++) sum += codes[i] * i;
  codes.push(sum % 103);
  return codes.map((c) => parseInt(P[c], 16).toString(2)).join('') + STOP;
}

// svg draws text as a barcode with quiet zones, scaled to its box.
export function svg(text, height = 60) {
  const ns = 'http://www.w3.org/2000/svg', b = bits(text), quiet = 10;
  const el = document.createElementNS(ns, 'svg');
  el.setAttribute('viewBox', `0 0 ${b.length + 2 * quiet} ${height}`);
  el.setAttribute('preserveAspectRatio', 'none');
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', 'Barcode ' + text);
  el.classList.add('barcode');
  el.dataset.code = text;
  for (let i = 0; i < b.length;) {
    if (b[i] === '0') { i++; continue; }
    let w = 0;
    while (b[i + w] === '1') w++;
    const r = document.createElementNS(ns, 'rect');
    r.setAttribute('x', i + quiet);
    r.setAttribute('y', 0);
    r.setAttribute('width', w);
    r.setAttribute('height', height);
    el.appendChild(r);
    i += w;
  }
  return el;
}
