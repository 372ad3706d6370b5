// The sandbox dashboard's script (served at /_sandbox/dashboard.js; the page allows no inline
// script): each form's buttons send JSON to a control endpoint with the form's dashboard token
// in X-Sandbox-Token, then the page reloads.
(() => {
  const KEY = 'sandbox-dashboard-flash';
  const flash = document.getElementById('flash');
  const last = sessionStorage.getItem(KEY);
  if (last) { sessionStorage.removeItem(KEY); flash.textContent = last; flash.className = 'ok'; }
  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!form.dataset.url) return;
    event.preventDefault();
    const button = event.submitter;
    const url = (button && button.dataset.url) || form.dataset.url;
    const method = (button && button.dataset.method) || form.dataset.method || 'POST';
    const body = Object.assign({}, JSON.parse(form.dataset.body || '{}'),
      JSON.parse((button && button.dataset.body) || '{}'));
    let token = '';
    for (const el of form.elements) {
      if (el.name === 'sandbox_token') { token = el.value; continue; }
      if (!el.name || el.tagName === 'BUTTON' || el.value === '') continue;
      body[el.name] = el.type === 'number' ? Number(el.value) : el.value;
    }
    const label = ((button && button.textContent) || 'action').trim() + ': ' + method + ' ' + url;
    const buttons = form.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const init = { method, headers: { 'x-sandbox-token': token } };
      if (method !== 'DELETE') {
        init.headers['content-type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      const res = await fetch(url, init);
      if (res.ok) {
        sessionStorage.setItem(KEY, '\u2713 ' + label + ' \u2192 ' + res.status);
        location.reload();
        return;
      }
      flash.textContent = '\u2717 ' + label + ' \u2192 ' + res.status + ' ' + (await res.text());
      flash.className = 'err';
    } catch (e) {
      flash.textContent = '\u2717 ' + label + ': ' + e;
      flash.className = 'err';
    }
    buttons.forEach((b) => { b.disabled = false; });
  });
})();
