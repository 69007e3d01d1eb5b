// The popup: shows the bridge's true state (from the worker's record, not a
// guess), pairs it with a code from `lumo pair`, shares or unshares the tab.

const ask = (message) => chrome.runtime.sendMessage(message);

async function render() {
  const { status, shared, settings } = await ask({ type: 'status' });
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  let text = status.state;
  if (status.state === 'reconnecting') text += ` (next try in ${Math.max(0, Math.round((status.nextTryAt - Date.now()) / 1000))} s)`;
  document.getElementById('state').textContent = text;
  document.getElementById('why').textContent = status.why || '';
  document.getElementById('server').value = settings.server;
  const isShared = tab && shared[tab.id];
  document.getElementById('share').hidden = !tab || isShared;
  document.getElementById('unshare').hidden = !isShared;
}

document.getElementById('pair').onsubmit = async (e) => {
  e.preventDefault();
  await ask({ type: 'pair', code: document.getElementById('code').value.trim(), server: document.getElementById('server').value.trim() });
  render();
};
for (const action of ['share', 'unshare']) {
  document.getElementById(action).onclick = async () => {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    await ask({ type: action, tabId: tab.id });
    render();
  };
}
render();
// At once when the worker records a new state; every second for the countdown.
chrome.storage.onChanged.addListener(() => render());
setInterval(render, 1000);
