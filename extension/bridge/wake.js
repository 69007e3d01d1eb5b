// An offscreen document that outlives the service worker: once a second it
// sends the worker a message, which restarts a stopped worker at once (the
// browser stops workers when it likes; alarms fire at most every 30 s), so
// the worker reconnects and lumo's waiting calls complete within about a second.
setInterval(() => {
  chrome.runtime.sendMessage({ type: 'wake' }).catch(() => {});
}, 1000);
