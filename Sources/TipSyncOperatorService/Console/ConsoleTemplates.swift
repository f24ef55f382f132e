package import Mustache
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// The console's pages as Mustache templates, compiled into the server (no files to deploy, no
/// build step). `{{x}}` is HTML-escaped; `{{{x}}}` is used only for SVG the server drew itself.
package enum ConsoleTemplates {
    package static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in all { try library.register(text, named: name) }
        return library
    }

    package static let all: [(String, String)] = [
        ("head", head), ("foot", foot), ("login", login), ("overview", overview), ("accounts", accounts),
        ("account", account), ("erase", erase), ("tips", tips), ("tip", tip), ("catalog", catalog),
        ("experiments", experiments), ("experiment", experiment),
    ]

    static let head = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · TipSync console</title>
        <style>
        :root { --ink:#1d2330; --muted:#5d6678; --line:#e3e6ee; --bg:#f6f7fb; --accent:#2f5bea; --bad:#c23b3b; --ok:#1d8a4a; }
        * { box-sizing: border-box; }
        body { margin:0; font:15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
        header { background:#fff; border-bottom:1px solid var(--line); }
        header .top { max-width:1120px; margin:0 auto; padding:12px 20px; display:flex; flex-wrap:wrap; gap:8px 20px; align-items:center; }
        header .brand { font-weight:700; letter-spacing:.2px; }
        header nav { display:flex; gap:16px; flex-wrap:wrap; }
        header nav a { color:var(--muted); text-decoration:none; }
        header nav a:hover { color:var(--accent); }
        header form { margin-left:auto; }
        main { max-width:1120px; margin:0 auto; padding:20px; }
        h1 { font-size:22px; margin:4px 0 16px; word-break:break-word; }
        h2 { font-size:17px; margin:28px 0 10px; }
        .cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(160px, 1fr)); gap:12px; }
        .card { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 16px; }
        .card .label { color:var(--muted); font-size:13px; }
        .card .value { font-size:24px; font-weight:600; }
        .panel { background:#fff; border:1px solid var(--line); border-radius:10px; padding:4px 0; overflow-x:auto; }
        table { width:100%; border-collapse:collapse; font-size:14px; }
        th, td { text-align:left; padding:8px 14px; border-bottom:1px solid var(--line); vertical-align:top; white-space:nowrap; }
        td.wrap { white-space:normal; overflow-wrap:anywhere; min-width:9rem; }
        .why { display:inline-block; white-space:normal; overflow-wrap:anywhere; max-width:28rem; font-size:.85em; }
        tr:last-child td { border-bottom:none; }
        th { color:var(--muted); font-weight:600; font-size:12px; text-transform:uppercase; letter-spacing:.4px; white-space:normal; }
        a { color:var(--accent); }
        code, .mono { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:13px; }
        .pill { display:inline-block; padding:1px 8px; border-radius:999px; font-size:12px; background:#eef1f8; color:var(--muted); }
        .pill.live { background:#e3f5ea; color:var(--ok); }
        .pill.invalidated { background:#fbe9e9; color:var(--bad); }
        .pill.eligible { background:#e3f5ea; color:var(--ok); }
        .muted { color:var(--muted); }
        .spark { display:block; width:100%; height:48px; }
        button, input[type=submit] { font:inherit; border:1px solid var(--line); background:#fff; border-radius:8px; padding:5px 12px; cursor:pointer; }
        button.danger { color:#fff; background:var(--bad); border-color:var(--bad); }
        input[type=text], input[type=password], input[type=search] { font:inherit; padding:7px 10px; border:1px solid var(--line); border-radius:8px; width:100%; max-width:420px; }
        .actions { display:flex; gap:8px; flex-wrap:wrap; margin:12px 0; }
        .actions form { margin:0; }
        form.inline { display:inline; margin:0; }
        .notice { background:#fff8e1; border:1px solid #f3dea0; border-radius:8px; padding:10px 14px; margin:12px 0; }
        .login { max-width:420px; margin:12vh auto; background:#fff; border:1px solid var(--line); border-radius:12px; padding:28px; }
        .bars { display:flex; align-items:flex-end; gap:3px; height:40px; }
        .bars span { display:block; width:14px; background:var(--accent); opacity:.75; border-radius:2px 2px 0 0; }
        .interval { display:block; width:100%; max-width:420px; height:44px; }
        select { font:inherit; padding:6px 8px; border:1px solid var(--line); border-radius:8px; max-width:100%; }
        .meter { display:inline-block; height:10px; background:var(--accent); opacity:.75; border-radius:2px; vertical-align:middle; }
        @media (max-width: 640px) {
          main { padding:12px; }
          .panel { overflow-x:visible; }
          table, tbody, tr, td { display:block; width:100%; }
          tr:has(> th) { display:none; }
          tr { border-bottom:1px solid var(--line); padding:6px 0; }
          tr:last-child { border-bottom:none; }
          td { border:none; padding:3px 14px; white-space:normal; overflow-wrap:anywhere; }
          td[data-label]::before { content:attr(data-label); display:block; color:var(--muted); font-size:11px; font-weight:600; text-transform:uppercase; letter-spacing:.4px; }
          header form { margin-left:0; }
        }
        </style></head><body>
        {{#session}}
        <header><div class="top"><span class="brand">TipSync console</span>
        <nav><a href="/console">Overview</a><a href="/console/accounts">Accounts</a><a href="/console/tips">Tips</a><a href="/console/catalog">Catalog</a><a href="/console/experiments">Experiments</a></nav>
        <form method="post" action="/console/logout"><input type="hidden" name="csrf" value="{{csrf}}">
        <span class="muted">{{adminKeyName}}</span> <button type="submit">Log out</button></form></div></header>
        {{/session}}
        <main>
        """

    static let foot = """
        </main></body></html>
        """

    static let login = """
        {{> head}}
        <div class="login"><h1>TipSync console</h1>
        <p class="muted">Log in with an admin key (<code>tipsync-server admin-keys create</code>).</p>
        {{#error}}<p class="notice" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/console/login">
        <p><label for="key">Admin key</label><br><input type="password" id="key" name="key" autocomplete="off" autofocus></p>
        <p><button type="submit" id="login">Log in</button></p></form></div>
        {{> foot}}
        """

    static let overview = """
        {{> head}}
        <h1>Overview</h1>
        <div class="cards">
        <div class="card"><div class="label">Accounts</div><div class="value" id="accounts">{{accounts}}</div></div>
        <div class="card"><div class="label">Devices</div><div class="value" id="devices">{{devices}}</div></div>
        <div class="card"><div class="label">Live now (this instance)</div><div class="value" id="live">{{live}}</div></div>
        <div class="card"><div class="label">Database</div><div class="value">{{databaseSize}}</div></div>
        </div>
        <h2>Last 24 hours on this instance</h2>
        <div class="cards">
        <div class="card"><div class="label">Pushes per minute · {{pushTotal}} in all</div>{{{pushSpark}}}</div>
        <div class="card"><div class="label">Pulls per minute · {{pullTotal}} in all</div>{{{pullSpark}}}</div>
        <div class="card"><div class="label">Errors per minute · {{errorTotal}} in all</div>{{{errorSpark}}}</div>
        </div>
        <h2>Last compactions</h2>
        <div class="panel"><table><tr><th>Account</th><th>When</th></tr>
        {{#compactions}}<tr><td data-label="Account" class="wrap"><a href="/console/accounts/{{path}}">{{account}}</a></td><td data-label="When">{{at}}</td></tr>{{/compactions}}
        {{^compactions}}<tr><td colspan="2" class="muted">No compaction yet.</td></tr>{{/compactions}}
        </table></div>
        <h2 id="quiet">Devices not seen for {{quietHours}} hours</h2>
        <form method="get" action="/console"><label>Hours <input name="quiet" type="number" min="1" value="{{quietHours}}"></label> <button>Show</button></form>
        <div class="panel"><table><tr><th>Account</th><th>Device</th><th>Last seen</th></tr>
        {{#quietDevices}}<tr><td data-label="Account" class="wrap"><a href="/console/accounts/{{path}}">{{account}}</a></td><td data-label="Device" class="wrap">{{device}}</td><td data-label="Last seen">{{lastSeen}}</td></tr>{{/quietDevices}}
        {{^quietDevices}}<tr><td colspan="3" class="muted">Every device was seen within that time.</td></tr>{{/quietDevices}}
        </table></div>
        {{> foot}}
        """

    static let accounts = """
        {{> head}}
        <h1>Accounts</h1>
        <form method="get" action="/console/accounts"><input type="search" name="q" value="{{query}}" placeholder="Account name starts with…" aria-label="Search accounts"></form>
        <h2>{{heading}}</h2>
        <div class="panel"><table><tr><th>Account</th><th>Devices</th><th>Log entries</th><th>Created</th></tr>
        {{#accounts}}<tr><td data-label="Account" class="wrap"><a href="/console/accounts/{{path}}">{{name}}</a></td><td data-label="Devices">{{devices}}</td><td data-label="Log entries">{{logEntries}}</td><td data-label="Created">{{createdAt}}</td></tr>{{/accounts}}
        {{^accounts}}<tr><td colspan="4" class="muted">No account matches.</td></tr>{{/accounts}}
        </table></div>
        {{#next}}<p><a href="/console/accounts?after={{next}}{{#query}}&amp;q={{query}}{{/query}}">Next page →</a></p>{{/next}}
        {{> foot}}
        """

    static let account = """
        {{> head}}
        <h1>{{name}}</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        <div class="cards">
        <div class="card"><div class="label">Log entries</div><div class="value">{{logEntries}}</div></div>
        <div class="card"><div class="label">End of log</div><div class="value">{{logEnd}}</div></div>
        <div class="card"><div class="label">Since last compaction</div><div class="value">{{entriesSinceCompaction}}</div></div>
        <div class="card"><div class="label">Last compaction</div><div class="value" style="font-size:15px">{{lastCompaction}}</div></div>
        </div>
        <div class="actions">
        <form method="post" action="/console/accounts/{{path}}/compact"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Compact now</button></form>
        <form method="get" action="/console/accounts/{{path}}/export"><button type="submit">Export log (JSON lines)</button></form>
        <form method="get" action="/console/accounts/{{path}}/erase"><button type="submit" class="danger">Erase account…</button></form>
        </div>
        <h2>Devices</h2>
        <div class="panel"><table id="devices"><tr><th>Device</th><th>Highest seq</th><th>Last seen</th><th>Live</th><th>Behind the log</th><th>Tokens</th><th></th></tr>
        {{#devices}}<tr><td data-label="Device" class="wrap">{{name}}</td><td data-label="Highest seq">{{highestSeq}}</td><td data-label="Last seen">{{lastSeen}}</td>
        <td data-label="Live">{{#live}}<span class="pill live">live</span>{{/live}}{{^live}}<span class="muted">—</span>{{/live}}</td>
        <td data-label="Behind the log" class="behind">{{behind}}</td>
        <td data-label="Tokens">{{tokens}}{{#revokedAt}} <span class="muted">revoked {{revokedAt}}</span>{{/revokedAt}}</td>
        <td><form method="post" action="/console/accounts/{{accountPath}}/devices/{{path}}/revoke"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="revoke" data-device="{{name}}">Revoke tokens</button></form></td></tr>{{/devices}}
        {{^devices}}<tr><td colspan="7" class="muted">No device yet.</td></tr>{{/devices}}
        </table></div>
        <p class="muted">Live shows this instance's connections. Behind the log: positions between the end of the log and where the device's latest pull reached (recorded within a few seconds).</p>
        <h2>Tips (merged state, as every device computes it)</h2>
        {{#hasCatalog}}<p class="muted">Status now and why, as a device of this account would compute them; targeting on a device's platform, version or locale reads <code>null</code> in the first line. Below it, each device that reported its platform, app version and locale: the status it computes with its own platform's catalog and context (what only it knows — transient parameters, its first-sync hold — is not seen here).</p>{{/hasCatalog}}
        <div class="panel"><table id="tips"><tr><th>Tip</th>{{#hasCatalog}}<th>Status now</th>{{/hasCatalog}}<th>Synced state</th><th>Written by</th><th>Displays (this epoch)</th><th>Support</th></tr>
        {{#tips}}<tr><td data-label="Tip" class="wrap"><code>{{tip}}</code>{{#tipTitle}}<br><span class="muted">{{tipTitle}}</span>{{/tipTitle}}</td>
        {{#hasCatalog}}<td data-label="Status now" class="status">{{status}}<br><span class="muted why">{{why}}</span>{{#deviceStatuses}}<br><span class="device-status" data-device="{{device}}"><strong>{{device}}</strong> ({{platform}}): {{line}}</span>{{/deviceStatuses}}</td>{{/hasCatalog}}
        <td data-label="Synced state">{{#reason}}<span class="pill invalidated">invalidated · {{reason}}</span>{{/reason}}{{^reason}}<span class="pill eligible">{{state}}</span>{{/reason}}</td>
        <td data-label="Written by" class="mono">{{writer}}</td><td data-label="Displays (this epoch)" class="wrap">{{displays}}</td>
        <td data-label="Support"><form method="post" action="/console/accounts/{{accountPath}}/tips/{{tipPath}}/reset" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="reset-tip" data-tip="{{tip}}">Reset</button></form> <form method="post" action="/console/accounts/{{accountPath}}/tips/{{tipPath}}/dismiss" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="dismiss-tip" data-tip="{{tip}}">Dismiss</button></form></td></tr>{{/tips}}
        {{^tips}}<tr><td colspan="6" class="muted">No tip state yet.</td></tr>{{/tips}}
        <p class="muted">Reset makes a tip eligible again, Dismiss closes it (<code>tipClosed</code>), for every device of the account: written to its log as the device <code>tipsync-admin</code>, it syncs like any change.</p>
        </table></div>
        {{^hasCatalog}}<p class="muted">Store a catalog (<code>tipsync-server catalog put FILE</code>) to see titles and each tip's status now.</p>{{/hasCatalog}}
        <h2>Parameters</h2>
        <div class="panel"><table><tr><th>Parameter</th><th>Value</th><th>Last writer</th></tr>
        {{#parameters}}<tr><td data-label="Parameter" class="wrap"><code>{{id}}</code></td><td data-label="Value" class="wrap mono">{{value}}</td><td data-label="Last writer" class="mono">{{writer}}</td></tr>{{/parameters}}
        {{^parameters}}<tr><td colspan="3" class="muted">None.</td></tr>{{/parameters}}
        </table></div>
        <h2>Donations</h2>
        <div class="panel"><table><tr><th>Event</th><th>Donations kept</th><th>Latest</th></tr>
        {{#events}}<tr><td data-label="Event" class="wrap"><code>{{event}}</code></td><td data-label="Donations kept">{{count}}</td><td data-label="Latest">{{latest}}</td></tr>{{/events}}
        {{^events}}<tr><td colspan="3" class="muted">None.</td></tr>{{/events}}
        </table></div>
        <h2>Recent changes (newest first)</h2>
        <div class="panel"><table><tr><th>Device</th><th>Seq</th><th>HLC</th><th>Change</th></tr>
        {{#changes}}<tr><td data-label="Device" class="wrap">{{device}}</td><td data-label="Seq">{{seq}}</td><td data-label="HLC" class="mono">{{hlc}}</td><td data-label="Change" class="wrap mono">{{summary}}</td></tr>{{/changes}}
        {{^changes}}<tr><td colspan="5" class="muted">The log is empty.</td></tr>{{/changes}}
        </table></div>
        {{> foot}}
        """

    static let erase = """
        {{> head}}
        <h1>Erase {{name}}?</h1>
        <p>This deletes the account's whole log, its devices and their tokens on every instance, at once. Its devices'
        next requests are refused. Only a hash of the name and the time are kept. It cannot be undone.</p>
        <div class="actions">
        <form method="post" action="/console/accounts/{{path}}/erase"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" id="confirm-erase">Erase {{name}} for good</button></form>
        <form method="get" action="/console/accounts/{{path}}"><button type="submit">Cancel</button></form>
        </div>
        {{> foot}}
        """

    static let tips = """
        {{> head}}
        <h1>Tips</h1>
        <p class="muted">Across every account, from each account's merged state. Updated in the background within a few seconds of a push.</p>
        <div class="panel"><table id="tip-usage"><tr><th>Tip</th><th>Accounts</th><th>Displayed</th><th>Closed</th><th>Used (action)</th><th>Count limit</th><th>Duration limit</th><th>Used after seeing</th><th>Displays per account</th><th>First display → invalidation, median</th></tr>
        {{#tips}}<tr><td data-label="Tip" class="wrap"><a href="/console/tips/{{path}}"><code>{{tip}}</code></a>{{#tipTitle}}<br><span class="muted">{{tipTitle}}</span>{{/tipTitle}}</td><td data-label="Accounts">{{accounts}}</td><td data-label="Displayed">{{displayed}}</td>
        <td data-label="Closed" class="closed">{{tipClosed}}</td><td data-label="Used (action)" class="used">{{actionPerformed}}</td><td data-label="Count limit">{{displayCountExceeded}}</td><td data-label="Duration limit">{{displayDurationExceeded}}</td>
        <td data-label="Used after seeing" class="used-after">{{usedAfterSeeing}}</td>
        <td data-label="Displays per account"><div class="bars" title="{{bucketTitle}}">{{#buckets}}<span style="height:{{height}}px" title="{{label}}: {{count}}"></span>{{/buckets}}</div></td>
        <td data-label="First display → invalidation, median">{{median}}</td></tr>{{/tips}}
        {{^tips}}<tr><td colspan="10" class="muted">No tip has been seen yet.</td></tr>{{/tips}}
        </table></div>
        <p class="muted">Count and duration limits: accounts whose displays reached the uploaded catalog's <code>maxDisplayCount</code> or <code>maxDisplayDuration</code>, as devices compute it. Used after seeing: accounts that performed the tip's action at or after its first display, of those that displayed it. Bars: accounts with 0, 1, 2–3, 4–7 and 8 or more displays.</p>
        {{> foot}}
        """

    static let tip = """
        {{> head}}
        <h1>Tip <code>{{tip}}</code></h1>
        {{#tipTitle}}<p>{{tipTitle}}</p>{{/tipTitle}}
        <p>{{accounts}} accounts, {{displayed}} displayed it; used after seeing: {{usedAfterSeeing}}. <a href="/console/tips">All tips</a></p>
        <div class="panel"><table id="tip-daily"><tr><th>Day (UTC)</th><th>First displayed</th><th>Closed</th><th>Used (action)</th></tr>
        {{#days}}<tr><td data-label="Day (UTC)">{{day}}</td>
        <td data-label="First displayed" class="displayed"><span class="meter" style="width:{{displayedWidth}}px"></span> {{displayed}}</td>
        <td data-label="Closed" class="closed"><span class="meter" style="width:{{closedWidth}}px"></span> {{closed}}</td>
        <td data-label="Used (action)" class="used"><span class="meter" style="width:{{usedWidth}}px"></span> {{used}}</td></tr>{{/days}}
        {{^days}}<tr><td colspan="4" class="muted">No display, close or use recorded yet.</td></tr>{{/days}}
        </table></div>
        <p class="muted">Accounts per day: the day each account first displayed the tip, and the day its close or action was written.</p>
        <h2>By catalog version</h2>
        <div class="panel"><table id="tip-by-version"><tr><th>Catalog version</th><th>First displayed</th><th>Closed</th><th>Used (action)</th></tr>
        {{#versions}}<tr><td data-label="Catalog version">{{version}}</td><td data-label="First displayed">{{displayed}}</td>
        <td data-label="Closed" class="closed">{{closed}}</td><td data-label="Used (action)" class="used">{{used}}</td></tr>{{/versions}}
        {{^versions}}<tr><td colspan="4" class="muted">Nothing recorded yet.</td></tr>{{/versions}}
        </table></div>
        <p class="muted">Each account's first display counts for the catalog version in force at that moment, its close or action for the version in force when it was written (<a href="/console/catalog">versions</a>).</p>
        {{> foot}}
        """

    static let catalog = """
        {{> head}}
        <h1>Catalog</h1>
        <p class="muted">The tips every device that follows the server's catalog evaluates with (protocol.md §16). An upload is validated whole: an invalid one changes nothing.</p>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p class="notice" role="alert" id="catalog-error">{{error}}</p>{{/error}}
        <div class="panel"><form method="post" action="/console/catalog"><input type="hidden" name="csrf" value="{{csrf}}">
        <textarea name="catalog" id="catalog-text" rows="14" style="width:100%;font-family:monospace" spellcheck="false">{{draft}}</textarea>
        <p><label>Platform part (optional: ios, web…) <input name="platform" id="catalog-platform" size="12" autocomplete="off"></label></p>
        <p><label><input type="checkbox" name="replaceAll" value="1" id="catalog-replace-all"> Replace the whole catalog, removing what platforms' parts added{{#removing}}: <strong>{{removing}}</strong>{{/removing}}</label></p>
        <p><button type="submit" id="upload-catalog">Upload as a new version</button> <button type="submit" name="remove" value="1" id="remove-platform">Remove this platform's part</button></p>
        <p class="muted">With a platform, the text is that platform's part (a Swift export, say): it replaces that platform's own tips and settings and leaves the others' (protocol.md §13.11).</p></form></div>
        <div class="panel"><table id="catalog-versions"><tr><th>Version</th><th>Uploaded</th><th>By</th><th>Tips</th><th>Changes from the one before</th><th></th></tr>
        {{#versions}}<tr><td data-label="Version">{{version}}{{#current}} <strong>(current)</strong>{{/current}}{{#restoredFrom}}<br><span class="muted">restores {{restoredFrom}}</span>{{/restoredFrom}}</td>
        <td data-label="Uploaded">{{at}}</td><td data-label="By">{{uploadedBy}}</td><td data-label="Tips">{{tips}}</td><td data-label="Changes" class="wrap">{{summary}}</td>
        <td>{{^current}}<form method="post" action="/console/catalog/versions/{{version}}/restore"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="restore" data-version="{{version}}">Restore</button></form>{{/current}}</td></tr>{{/versions}}
        {{^versions}}<tr><td colspan="6" class="muted">No catalog uploaded yet.</td></tr>{{/versions}}
        </table>
        {{#olderVersions}}<p class="muted" id="older-versions">{{olderVersions}} older versions are not shown here: <code>tipsync-server catalog versions</code> or <code>GET /admin/v1/catalog/versions</code> lists them all, and each can be restored.</p>{{/olderVersions}}
        </div>
        {{> foot}}
        """

    static let experiments = """
        {{> head}}
        <h1>Experiments</h1>
        <p class="muted">Randomized holdouts (protocol.md §13.12): held-out accounts never see the tip on any device, yet record when it would have been shown, so both arms are compared from the same moment. Results update in the background within a few seconds of a push.</p>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p class="notice" role="alert" id="experiment-error">{{error}}</p>{{/error}}
        <div class="panel"><table id="experiments"><tr><th>Experiment</th><th>Tip</th><th>Held out</th><th>State</th><th>Reached (holdout / treatment)</th><th>Verdict</th></tr>
        {{#experiments}}<tr><td data-label="Experiment" class="wrap"><a href="/console/experiments/{{path}}"><code>{{id}}</code></a></td><td data-label="Tip" class="wrap"><code>{{tip}}</code></td>
        <td data-label="Held out">{{holdout}}%</td><td data-label="State"><span class="pill{{#running}} live{{/running}}">{{state}}</span></td><td data-label="Reached">{{reached}}</td><td data-label="Verdict" class="wrap">{{verdict}}</td></tr>{{/experiments}}
        {{^experiments}}<tr><td colspan="6" class="muted">No experiment yet.</td></tr>{{/experiments}}
        </table></div>
        <h2>Start an experiment</h2>
        <div class="panel" style="padding:4px 14px"><form method="post" action="/console/experiments"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="experiment-tip">Tip</label><br><select name="tip" id="experiment-tip">{{#tips}}<option>{{tip}}</option>{{/tips}}</select>{{^tips}} <span class="muted">Every tip of the catalog already runs an experiment, or there is no catalog.</span>{{/tips}}</p>
        <p><label for="experiment-id">Experiment id (letters, digits, - _ .)</label><br><input type="text" name="id" id="experiment-id" autocomplete="off"></p>
        <p><label for="experiment-holdout">Percent held out</label><br><input type="text" name="holdout" id="experiment-holdout" value="10" inputmode="decimal"></p>
        <p><label for="experiment-goal">Goal</label><br><select name="goal" id="experiment-goal"><option value="actionPerformed">the tip's actionPerformed</option>{{#events}}<option value="{{event}}">a donation to {{event}}</option>{{/events}}</select></p>
        <p><label for="experiment-window">Window, days after first reach</label><br><input type="text" name="windowDays" id="experiment-window" value="7" inputmode="decimal"></p>
        <p><button type="submit" id="start-experiment">Start (a new catalog version)</button></p></form></div>
        {{> foot}}
        """

    static let experiment = """
        {{> head}}
        <h1>Experiment <code>{{id}}</code></h1>
        <p>On tip <a href="/console/tips/{{tipPath}}"><code>{{tip}}</code></a>, {{holdout}}% of accounts held out; goal: {{goal}} within a {{window}} window after an account's first reach. <span class="pill{{#running}} live{{/running}}" id="experiment-state">{{state}}</span>{{#stoppedAt}} <span class="muted">since {{stoppedAt}}</span>{{/stoppedAt}}</p>
        <p class="notice" role="status" id="verdict">{{verdict}}</p>
        {{#difference}}<div class="panel" style="padding:10px 14px"><p style="margin:0 0 4px">Treatment − holdout: <strong id="difference">{{estimate}} points</strong>, 95% interval {{lower}} to {{upper}} (Newcombe's hybrid score interval).</p>{{{chart}}}</div>{{/difference}}
        <h2>Arms</h2>
        <div class="panel"><table id="arms"><tr><th>Arm</th><th>Reached</th><th>Exposed</th><th>Analysed</th><th>Converted</th><th>Rate</th><th>− holdout, points ({{confidence}}% interval)</th></tr>
        {{#arms}}<tr><td data-label="Arm">{{arm}}</td><td data-label="Reached">{{reached}}</td><td data-label="Exposed">{{exposed}}</td><td data-label="Analysed">{{analysed}}</td><td data-label="Converted">{{converted}}</td><td data-label="Rate">{{rate}}</td><td data-label="− holdout, points">{{versus}}</td></tr>{{/arms}}
        </table></div>
        <p class="muted">Reached: accounts for which the tip would have been shown (holdout) or was available (treatment), on any device; exposed: shown. Analysed: reached accounts whose whole window has passed before now and before the experiment stopped — every analysed account had the same time to convert. Results need {{minimum}} analysed accounts per arm. <span id="confidence-sentence">{{confidenceSentence}}</span></p>
        <h2>Sample size</h2>
        <form method="get" action="/console/experiments/{{path}}"><p><label for="effect">Smallest difference worth detecting, in points</label><br><input type="text" name="effect" id="effect" value="{{effect}}" inputmode="decimal" style="max-width:8rem"> <button type="submit">Size</button></p></form>
        {{#sampleSize}}<p id="sample-size">To detect it from the holdout's rate at 5% significance and 80% power: {{holdout}} held-out and {{treatment}} treated accounts analysed ({{total}} in all).</p>{{/sampleSize}}
        {{^sampleSize}}<p class="muted">Sized once the holdout has a conversion rate.</p>{{/sampleSize}}
        <div class="actions"><a href="/console/experiments/{{path}}/export?format=csv">Export per-account records (CSV)</a> <a href="/console/experiments/{{path}}/export?format=json">(JSON)</a>
        {{#running}}<form method="post" action="/console/experiments/{{path}}/stop"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" id="stop-experiment">Stop the experiment</button></form>{{/running}}</div>
        <p class="muted" id="participation-delay">An account is counted a few seconds after its device's reach reaches the server (logs are summarized every 2 s, later under load); nothing is lost meanwhile.</p>
        {{> foot}}
        """
}
