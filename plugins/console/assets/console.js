// The sms console. Everything it shows comes from the kernel's own routes,
// which check the caller; every text from the kernel goes into the page as
// text (el() makes text nodes), never as HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const MAX_EVENTS = 500;
const ui = { me: null, token: sessionStorage.getItem('sms-token') || '', state: null, events: [], after: 0, picked: '' };
const chatSession = sessionStorage.getItem('sms-chat') || 'console-' + Math.random().toString(36).slice(2, 10);
sessionStorage.setItem('sms-chat', chatSession);

function headers(extra) {
  const h = { 'X-Sms-Csrf': '1', ...extra };
  if (ui.token) h.Authorization = 'Bearer ' + ui.token;
  return h;
}

// api calls a kernel route (relative to the page, so a path prefix holds)
// and returns {status, body}.
async function api(method, path, body) {
  const init = { method, headers: headers({ Accept: 'application/json' }), credentials: 'same-origin' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const r = await fetch(path, init);
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  return { status: r.status, body: data };
}

function errorOf(r) {
  return (r.body && r.body.error && r.body.error.message) || 'HTTP ' + r.status;
}

function say(text) { $('status').textContent = text || ''; }

// ---- signing in ----

async function start() {
  const me = await api('GET', 'api/auth/me');
  ui.me = me.status === 200 ? me.body : null;
  const st = await api('GET', 'api/state');
  // With users on, people sign in; without, a token opens a guarded kernel.
  if ((ui.me && !ui.me.authenticated && !ui.token) || st.status === 401) {
    return showSignin(me.status === 200);
  }
  $('signin').hidden = true;
  $('tabs').hidden = false;
  $('logout').hidden = !(ui.me && ui.me.authenticated) && !ui.token;
  $('who').textContent = ui.me && ui.me.authenticated ? ui.me.name : ui.token ? 'token' : 'open kernel';
  if (st.status === 200) {
    render(st.body);
    follow();
  } else {
    // The admin routes answer elsewhere (an admin listener): chat only.
    for (const b of document.querySelectorAll('nav button')) b.hidden = b.dataset.tab !== 'chat';
  }
  show('chat');
}

function showSignin(users) {
  $('signin').hidden = false;
  $('tabs').hidden = true;
  for (const s of document.querySelectorAll('.tab')) s.hidden = true;
  $('login').hidden = !users;
}

$('login').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = e.target;
  const r = await api('POST', 'api/auth/login', { login: f.login.value, password: f.password.value });
  if (r.status !== 200) { $('signin-error').textContent = errorOf(r); return; }
  f.password.value = '';
  $('signin-error').textContent = '';
  start();
});

$('token').addEventListener('submit', (e) => {
  e.preventDefault();
  ui.token = e.target.token.value.trim();
  sessionStorage.setItem('sms-token', ui.token);
  e.target.token.value = '';
  start();
});

$('logout').addEventListener('click', async () => {
  if (ui.me && ui.me.authenticated) await api('POST', 'api/auth/logout');
  ui.token = '';
  sessionStorage.removeItem('sms-token');
  location.reload();
});

function can(scope) {
  if (ui.me && ui.me.authenticated) return (ui.me.scopes || []).includes(scope);
  return null; // a token's scopes are the kernel's to check
}

// ---- tabs ----

function show(tab) {
  for (const s of document.querySelectorAll('.tab')) s.hidden = s.id !== tab;
  for (const b of document.querySelectorAll('nav button')) b.classList.toggle('on', b.dataset.tab === tab);
}
for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => show(b.dataset.tab));

// ---- state: plugins and approvals ----

let refreshing = null, asked = 0;
function refresh() {
  if (refreshing) return;
  refreshing = setTimeout(async () => {
    refreshing = null;
    const n = ++asked;
    const st = await api('GET', 'api/state');
    if (st.status === 200 && n === asked) render(st.body); // an older answer never replaces a newer one
  }, 100);
}

function render(state) {
  ui.state = state;
  $('kernel').textContent = state.kernel;
  $('taint').hidden = !(state.taint && state.taint.length);
  $('taint').textContent = 'tainted: ' + (state.taint || []).join(', ');
  renderPlugins(state.fibers || []);
  renderApprovals(state.pending || []);
}

function renderPlugins(fibers) {
  const rows = fibers.map((f) => {
    const toggle = f.trust === 'system' || can('admin') === false ? null : el('button', {
      type: 'button', class: f.enabled ? 'danger' : '', 'data-plugin': f.id,
      onclick: (e) => { e.stopPropagation(); setEnabled(f.id, !f.enabled); },
    }, f.enabled ? 'Disable' : 'Enable');
    const state = f.enabled ? f.state : 'disabled' + (f.held ? ' (held by an admin)' : '');
    return el('tr', { class: f.id === ui.picked ? 'picked' : '', 'data-plugin': f.id, onclick: () => pick(f.id) },
      el('td', {}, f.id), el('td', {}, f.version), el('td', {}, f.trust),
      el('td', { class: 'state-' + f.state }, state, f.error ? el('div', { class: 'error' }, f.error) : null),
      el('td', {}, f.requestedBy || ''), el('td', {}, toggle));
  });
  $('plugin-rows').replaceChildren(...rows);
}

async function setEnabled(id, on) {
  const r = await api('POST', 'api/plugins/' + encodeURIComponent(id) + (on ? '/enable' : '/disable'));
  say(r.status === 200 ? '' : (on ? 'enable ' : 'disable ') + id + ': ' + errorOf(r));
  refresh();
}

async function pick(id) {
  ui.picked = id;
  const still = () => ui.picked === id; // a later pick wins
  renderPlugins((ui.state && ui.state.fibers) || []);
  const box = $('plugin-detail');
  box.hidden = false;
  box.replaceChildren(el('h3', {}, id));
  const f = ((ui.state && ui.state.fibers) || []).find((x) => x.id === id);
  if (f && f.trust === 'system') { box.append(el('p', { class: 'muted' }, 'A system plugin: its code is part of the kernel.')); return; }
  const r = await api('GET', 'api/plugins/' + encodeURIComponent(id) + '/versions');
  if (!still()) return;
  if (r.status !== 200) { box.append(el('p', { class: 'error' }, errorOf(r))); return; }
  const versions = r.body.versions || [];
  const label = (v) => v.version + ' · ' + v.codeHash.slice(7, 19) + ' · ' + new Date(v.time).toLocaleString();
  const options = () => versions.map((v, i) => el('option', { value: String(i) }, label(v)));
  const to = el('select', { id: 'diff-to' }, options());
  to.value = String(versions.length - 1);
  const from = el('select', { id: 'diff-from' }, el('option', { value: '' }, 'nothing (the code only)'), options());
  const out = el('pre', { id: 'code' });
  let shown = 0;
  const update = async () => {
    const n = ++shown;
    const b = await codeOf(id, versions[to.value]);
    const a = from.value === '' ? null : await codeOf(id, versions[from.value]);
    if (n !== shown || !still()) return; // a later choice wins
    out.replaceChildren(...(a === null ? [b] : diff(a, b)));
  };
  from.addEventListener('change', update);
  to.addEventListener('change', update);
  box.append(el('div', { class: 'versions' }, el('label', {}, 'Version', to), el('label', {}, 'compared with', from)), out);
  update();
}

const codes = new Map();
async function codeOf(id, v) {
  if (!v) return '';
  const key = id + ' ' + v.codeHash;
  if (!codes.has(key)) {
    const r = await api('GET', 'api/plugins/' + encodeURIComponent(id) + '/versions/' + encodeURIComponent(v.codeHash));
    codes.set(key, r.status === 200 ? r.body.code : '(' + errorOf(r) + ')');
  }
  return codes.get(key);
}

// declaration lists what an approval's plugin declares, as the kernel
// words it (the same lines its Approval object shows), as text.
function declaration(d) {
  const rows = [];
  for (const k of ['points', 'scopes', 'inject', 'optional', 'provide', 'routes', 'schedules', 'contributions']) {
    const v = d[k] || [];
    if (!v.length) continue;
    rows.push(el('dt', {}, k), el('dd', {}, v.map((x) => el('div', {}, x)))); // all of it: it is what a decision covers
  }
  return rows.length ? el('dl', {}, rows) : el('p', { class: 'muted' }, 'Nothing beyond its code.');
}

// renderApprovals keeps the card of each approval still waiting where it
// is (so nothing moves under the pointer), drops the decided ones and adds
// new ones at the end.
function renderApprovals(pending) {
  $('waiting').textContent = pending.length ? String(pending.length) : '';
  $('no-approvals').hidden = pending.length > 0;
  const list = $('approval-list');
  const key = (a) => a.id + ' ' + a.codeHash;
  const want = new Set(pending.map(key));
  for (const card of [...list.children]) if (!want.has(card.dataset.key)) card.remove();
  const have = new Set([...list.children].map((c) => c.dataset.key));
  for (const a of pending) if (!have.has(key(a))) list.append(card(a, key(a)));
}

function card(a, key) {
  return el('div', { class: 'card', 'data-approval': a.id, 'data-key': key },
    el('h3', {}, a.pluginId + ' ' + a.version),
    el('p', {}, (a.manifest && a.manifest.description) || ''),
    el('dl', {}, el('dt', {}, 'requested by'), el('dd', {}, a.requestedBy),
      el('dt', {}, 'why a human'), el('dd', {}, (a.reasons || []).join('; ')),
      el('dt', {}, 'code'), el('dd', {}, a.codeHash)),
    el('h4', {}, 'What it declares'), declaration(a.declaration || {}),
    el('h4', {}, 'Its code'), el('pre', {}, a.code),
    decide(a));
}

// decide offers approve and reject where the caller may decide here, and
// otherwise says who decides.
function decide(a) {
  if (a.object) {
    return el('p', { class: 'hint' }, 'The operator decides, through an Approval in namespace ', el('code', {}, a.object.namespace),
      ' (kernel approval ', el('code', {}, a.object.kernelApprovalId), '). Approve it with ', el('code', {}, a.object.command));
  }
  if (can('approve') === false) return el('p', { class: 'hint muted' }, 'Waits for someone who may approve.');
  const go = (yes) => async () => {
    // The code hash binds the decision to the code shown above.
    const r = await api('POST', 'api/approvals/' + encodeURIComponent(a.id) + (yes ? '/approve' : '/reject'), { codeHash: a.codeHash });
    say(r.status === 200 ? '' : (yes ? 'approve: ' : 'reject: ') + errorOf(r));
    refresh();
  };
  return el('div', { class: 'actions' },
    el('button', { type: 'button', class: 'primary', onclick: go(true) }, 'Approve'),
    el('button', { type: 'button', class: 'danger', onclick: go(false) }, 'Reject'));
}

// ---- events ----

async function follow() {
  for (let wait = 1000; ; wait = Math.min(wait * 2, 30000)) {
    try {
      const resp = await fetch('api/events/stream?after=' + ui.after, { headers: headers({ Accept: 'text/event-stream' }), credentials: 'same-origin' });
      if (resp.status === 401) return showSignin(ui.me !== null);
      if (resp.ok) {
        wait = 1000;
        await readSSE(resp, (data) => event(JSON.parse(data)));
      }
    } catch (e) { /* reconnect below */ }
    await new Promise((r) => setTimeout(r, wait));
  }
}

function event(e) {
  ui.after = Math.max(ui.after, e.seq);
  ui.events.push(e);
  if (ui.events.length > MAX_EVENTS) ui.events.shift();
  if (/^(plugin|fiber|judge)\//.test(e.type)) refresh();
  if (!drawing) drawing = setTimeout(() => { // one render for a burst, such as the log replayed on load
    drawing = null;
    options('event-plugin', ui.events.map((x) => x.plugin).filter(Boolean));
    options('event-kind', ui.events.map((x) => x.type));
    renderEvents();
  }, 200);
}
let drawing = null;

function options(id, values) {
  const sel = $(id);
  const have = new Set([...sel.options].map((o) => o.value));
  for (const v of new Set(values)) if (!have.has(v)) sel.append(el('option', { value: v }, v));
}

function renderEvents() {
  const p = $('event-plugin').value, k = $('event-kind').value;
  const shown = ui.events.filter((e) => (!p || e.plugin === p) && (!k || e.type === k)).slice(-200).reverse();
  $('event-list').replaceChildren(...shown.map((e) => el('li', { 'data-seq': String(e.seq) },
    '#' + e.seq + ' ' + new Date(e.time).toLocaleTimeString() + ' ' + e.type + (e.plugin ? ' ' + e.plugin : '') +
    (e.data ? ' ' + JSON.stringify(e.data).slice(0, 300) : ''))));
}
$('event-plugin').addEventListener('change', renderEvents);
$('event-kind').addEventListener('change', renderEvents);

// ---- chat ----

$('ask').addEventListener('submit', async (e) => {
  e.preventDefault();
  const box = e.target.text;
  const text = box.value.trim();
  if (!text) return;
  box.value = '';
  $('transcript').append(el('li', { class: 'user' }, el('div', { class: 'text' }, text)));
  const turn = el('li', { class: 'agent' }, el('div', { class: 'text' }));
  $('transcript').append(turn);
  const send = e.target.querySelector('button');
  send.disabled = true; // one turn at a time
  try {
    await converse(turn, text);
  } catch (err) {
    turn.append(el('div', { class: 'error' }, 'the answer broke off: ' + err));
  } finally {
    send.disabled = false;
  }
});

// converse sends text as one chat turn and shows the answer in turn.
async function converse(turn, text) {
  const resp = await fetch('api/chat/stream', {
    method: 'POST', credentials: 'same-origin',
    headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify({ session: chatSession, text }),
  });
  if (resp.status === 401) { showSignin(ui.me !== null); return; }
  if (!resp.ok) {
    let msg = 'HTTP ' + resp.status;
    try { msg = (await resp.json()).error.message; } catch (err) { /* keep the status */ }
    turn.append(el('div', { class: 'error' }, msg));
    return;
  }
  await readSSE(resp, (data) => turnEvent(turn, JSON.parse(data)));
}

// turnEvent shows one event of a chat turn in turn.
function turnEvent(turn, ev) {
  // The turn's last child is always the text the agent is writing.
  let reply = turn.lastElementChild;
  switch (ev.type) {
    case 'text_delta':
      reply.append(ev.text);
      break;
    case 'thinking_delta': {
      // The model's reasoning, shown apart from its reply.
      let thinking = reply.previousElementSibling;
      if (!thinking || !thinking.classList.contains('thinking')) {
        thinking = el('div', { class: 'thinking' });
        turn.insertBefore(thinking, reply);
      }
      thinking.append(ev.text);
      break;
    }
    case 'tool_call':
      turn.append(el('div', { class: 'step' }, '→ ' + ev.step.tool + ' ' + JSON.stringify(ev.step.input)));
      reply = el('div', { class: 'text' });
      turn.append(reply);
      break;
    case 'tool_result':
      turn.insertBefore(el('div', { class: 'step' + (ev.step.isError ? ' error' : '') }, '← ' + ev.step.result.slice(0, 500)), reply);
      break;
    case 'verdict':
      turn.insertBefore(verdict(ev.verdict), reply);
      refresh();
      break;
    case 'halted':
      // The tenant's budget stopped the turn: what it says is for the user.
      turn.append(el('div', { class: 'error halted' }, ev.text));
      break;
    case 'error':
      turn.append(el('div', { class: 'error' }, ev.error));
      break;
  }
  turn.scrollIntoView({ block: 'end' });
}

// verdict shows a judge's verdict: mounted; pending, with what it waits
// for; rejected, with the gate and the reason.
function verdict(v) {
  const box = el('div', { class: 'verdict ' + v.status, 'data-plugin': v.pluginId },
    el('span', { class: 'badge' }, v.status), ' ', v.pluginId + ' ' + v.version);
  if (v.status === 'rejected') box.append(el('div', {}, 'at the ' + v.gate + ' gate: ' + (v.reason || '')));
  if (v.status === 'pending') {
    box.append(el('div', {}, 'waits for a human: ' + (v.reason || 'approval ' + v.approvalId)));
    box.append(el('button', { type: 'button', onclick: () => show('approvals') }, 'See what it declares'));
  }
  if (v.rolledBack) box.append(el('div', {}, 'rolled back' + (v.restored ? ' to ' + v.restored : '')));
  return box;
}

start();
