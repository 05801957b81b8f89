// Builds the page's nodes from the hive's data. Everything an agent (or
// anyone) wrote goes in as text (textContent, createTextNode), never as
// markup: a transcript holding <script> or <img onerror> shows those
// characters and runs nothing.
'use strict';

function el(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined && text !== null) n.textContent = String(text);
  return n;
}

// A tool call's arguments as a person reads them: the command or path
// when there is one, else the JSON.
function argsText(args) {
  if (args === null || args === undefined) return '';
  if (typeof args === 'string') return args;
  for (const k of ['command', 'cmd', 'file_path', 'path', 'pattern', 'url']) {
    if (typeof args[k] === 'string') return args[k];
  }
  return JSON.stringify(args, null, 2);
}

// One transcript item: {id, kind: user|agent|thinking|tool|system, text,
// tool, args, output, error, status}.
function itemNode(item) {
  let n;
  if (item.kind === 'thinking') {
    n = el('details', 'item thinking');
    n.append(el('summary', null, 'thinking'), el('div', 'text', item.text));
  } else if (item.kind === 'tool') {
    n = el('details', 'item tool' + (item.error ? ' failed' : ''));
    const head = item.tool + (item.args ? ': ' + argsText(item.args).split('\n')[0] : '');
    n.append(el('summary', null, head));
    if (item.args) n.append(el('pre', 'args', argsText(item.args)));
    if (item.text) n.append(el('pre', 'args', item.text));
    if (item.output) n.append(el('pre', 'output', item.output));
  } else {
    n = el('div', 'item msg ' + item.kind, item.text);
  }
  n.dataset.item = item.id;
  if (item.status) n.dataset.status = item.status;
  return n;
}

// One approval card: the pane, the tool and its command or diff, allow
// once / always / deny with a reason.
function cardNode(pane, approval, acts) {
  const n = el('article', 'card');
  n.dataset.pane = pane.id;
  n.dataset.request = approval.request_id;
  n.append(el('h3', null, pane.name + ' asks to run ' + approval.tool));
  if (approval.description) n.append(el('p', 'muted', approval.description));
  n.append(el('pre', 'args', argsText(approval.arguments)));
  if (!acts) {
    n.append(el('p', 'muted', 'This device is read-only.'));
    return n;
  }
  const row = el('div', 'row');
  if (approval.confirm) {
    // A destructive request's second card: only its own confirm runs it.
    row.append(el('button', 'confirm danger', 'Yes, I am sure: run it'));
  } else {
    row.append(
      el('button', 'allow', 'Allow once'),
      el('button', 'always', 'Always'),
    );
  }
  const reason = el('input', 'reason');
  reason.placeholder = 'Reason (optional)';
  const deny = el('button', 'deny danger', 'Deny');
  n.append(row, reason, deny);
  return n;
}

function paneNode(pane, selected) {
  const n = el('li', 'pane' + (selected ? ' selected' : ''));
  n.dataset.pane = pane.id;
  n.dataset.state = pane.state;
  const cost = pane.usage && pane.usage.cost_usd !== null && pane.usage.cost_usd !== undefined
    ? '$' + Number(pane.usage.cost_usd).toFixed(2) : '';
  n.append(
    el('span', 'name', pane.name),
    el('span', 'state ' + pane.state, pane.state.replace('_', ' ')),
    el('span', 'muted', [pane.model || pane.provider, cost].filter(Boolean).join(' · ')),
  );
  return n;
}
