// Pairs this browser with the code in the link's fragment (never sent to
// the server in the URL, so no log or proxy sees it) or typed in.
'use strict';

async function pair(code) {
  const out = document.getElementById('outcome');
  out.textContent = 'Pairing…';
  let res;
  try {
    res = await fetch('/api/pair', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: code.trim() }),
    });
  } catch (e) {
    out.textContent = 'hive did not answer: ' + e;
    return;
  }
  if (res.ok) {
    out.textContent = 'Paired.';
    history.replaceState(null, '', '/pair');
    location.replace('/');
    return;
  }
  out.dataset.refused = String(res.status);
  out.textContent = await res.text();
}

document.getElementById('pair').addEventListener('submit', (ev) => {
  ev.preventDefault();
  pair(document.getElementById('code').value);
});

const fromLink = decodeURIComponent(location.hash.replace(/^#/, ''));
if (fromLink) {
  document.getElementById('code').value = fromLink;
  pair(fromLink);
}
