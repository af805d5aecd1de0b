// Helpers of the sms console that touch no state: building elements (every
// string becomes a text node, never HTML), reading server-sent events and
// diffing two texts by line.
'use strict';

// el builds an element; string children become text nodes.
function el(tag, props, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') n.className = v;
    else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v);
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    n.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return n;
}

// readSSE reads a server-sent event stream, calling fn with each data frame.
async function readSSE(resp, fn) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = '', data = [], id = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, '');
      buf = buf.slice(i + 1);
      if (line === '') {
        if (data.length) fn(data.join('\n'), id);
        data = []; id = '';
      } else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      else if (line.startsWith('id:')) id = line.slice(3).trim();
    }
  }
}

// diff returns the lines of b against a, added and removed lines marked
// (a longest common subsequence). Past 2000 lines it says it stopped.
const DIFF_LINES = 2000;
function diff(a, b) {
  const x = a.split('\n').slice(0, DIFF_LINES), y = b.split('\n').slice(0, DIFF_LINES);
  const n = x.length, m = y.length, w = m + 1;
  const L = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { out.push(el('span', {}, '  ' + x[i] + '\n')); i++; j++; }
    else if (i < n && (j === m || L[(i + 1) * w + j] >= L[i * w + j + 1])) { out.push(el('span', { class: 'del' }, '- ' + x[i] + '\n')); i++; }
    else { out.push(el('span', { class: 'add' }, '+ ' + y[j] + '\n')); j++; }
  }
  if (a.split('\n').length > DIFF_LINES || b.split('\n').length > DIFF_LINES) {
    out.push(el('span', { class: 'muted' }, '(compared up to line ' + DIFF_LINES + ' only)\n'));
  }
  return out;
}
