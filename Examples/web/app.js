// The web demo: a tip closed here stays closed on every other device of the account (another
// browser, a phone with the Swift library, a tipsync-agent). Query parameters configure it:
//   ?server=http://127.0.0.1:8080&device=browser&token=ts_…   (a device token for `device`)
//   &firstSyncTimeout=5   (seconds a new device holds back its tips for its first sync; default 5)
//   &followCatalog=1      (evaluate tips with the catalog operators upload to the server, protocol.md §16)
// Without `server` it runs on this browser's storage alone. See README, "From a web app".
// The catalog is the one the Swift walkthrough and the agent walkthrough use (Examples/catalog.json),
// so the page, a phone and an agent of one account see each other's changes. Its images are SF
// Symbol names; `symbols` maps them to this page's icons (protocol.md §13.1, "Images").
import { configure } from '../../clients/web/src/browser.js';

const query = new URLSearchParams(location.search);
const catalog = await (await fetch('../catalog.json')).text();
const tipsync = await configure({
  device: query.get('device') ?? 'browser',
  catalog,
  server: query.get('server') ?? undefined,
  token: query.get('token') ?? undefined,
  firstSyncTimeout: query.has('firstSyncTimeout') ? Number(query.get('firstSyncTimeout')) : undefined,
  followsServerCatalog: query.has('followCatalog'),
  symbols: { star: 'icons/star.svg', sparkles: 'icons/sparkles.svg', magnifyingglass: 'icons/search.svg' },
});

// The app's own events and parameters, as it would record them: the person is signed in; opening a
// yard is the Swift walkthrough's `opened-detail` and `viewed-yard` donations.
await tipsync.setParameter('isLoggedIn', true);
document.querySelector('#search-button').addEventListener('click', () => tipsync.donate('searched'));
document.querySelector('#yard-button').addEventListener('click', () =>
  Promise.all([tipsync.donate('opened-detail'), tipsync.donate('viewed-yard', { yardID: 7 })]));
document.addEventListener('tipsync-action', (event) => {
  console.log(`action ${event.detail.action} on tip ${event.detail.tip}`);
});

// A list of every tip's status, kept current.
const list = document.querySelector('#statuses');
const render = () => {
  list.replaceChildren(
    ...tipsync.replica.catalog.tips.map((tip) => {
      const item = document.createElement('li');
      item.textContent = `${tip.id}: ${tipsync.status(tip.id)}`;
      return item;
    }));
  // What the sync is doing now, in the protocol's words (§17.4): never "syncs" while nothing does.
  const { state, code, lastError, nextAttemptAt } = tipsync.syncStatus;
  const retry = nextAttemptAt ? ` Next attempt at ${new Date(nextAttemptAt).toLocaleTimeString()}.` : '';
  const who = tipsync.leads ? `This tab syncs as device “${tipsync.replica.deviceID}”` : 'Another tab of this device syncs; this one follows it';
  document.querySelector('#sync-state').textContent = {
    connecting: `${who}: connecting…`,
    connected: `${who}: connected.`,
    offline: `${who}: offline, cannot reach the server (${lastError}).${retry}`,
    refused: `${who}: the server refuses (${code}: ${lastError}).${retry}`,
    stopped: `Sync stopped (${code ?? 'stopped'}): ${lastError ?? 'the app stopped it'}.`,
  }[state] ?? `${who}.`;
};
tipsync.addEventListener('change', render);
tipsync.addEventListener('leader', render);
tipsync.addEventListener('syncstatus', render);
render();

// For tests and the console: the configured instance.
globalThis.tipsync = tipsync;
