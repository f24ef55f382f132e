import Foundation
import Testing
import TipSyncTestSupport

/// `<tipsync-tip>` as a web team would check it (issue 54): tab order, theming that follows the page,
/// widths, headings and accessibility, in headless Chromium with real key events. The pages are
/// `Tests/TipSyncAgentTests/Fixtures/escape.html` and `tip-forms.html` (every form of tip), and the
/// web demo. Screenshots go to `tipsync-web-shots` in the temporary directory, for people to look at.
@Suite(
    .serialized,
    .enabled(
        if: HeadlessChromium.executable != nil || ProcessInfo.processInfo.environment["TIPSYNC_REQUIRE_BROWSER"] != nil,
        "needs chromium and node"))
struct WebTipElementTests {
    /// `tip-forms.html` with the page's `color-scheme` set to `scheme` (none: the page declares none),
    /// its three tips showing.
    static func openForms(scheme: String? = nil, systemScheme: String = "light") async throws -> (
        Background, HeadlessChromium
    ) {
        let (pages, base) = try await WebBrowserTests.servePackage()
        let browser = try await HeadlessChromium()
        try await browser.emulateColorScheme(systemScheme)
        let query = scheme.map { "?scheme=\($0.replacingOccurrences(of: " ", with: "%20"))" } ?? ""
        try await browser.open("\(base)/Tests/TipSyncAgentTests/Fixtures/tip-forms.html\(query)")
        #expect(try await browser.evaluate(WebBrowserTests.ready, awaitPromise: true) as? Bool == true)
        let shown = ["search", "welcome", "favorite"].map(WebBrowserTests.shown).joined(separator: " && ")
        #expect(try await browser.evaluate(WebBrowserTests.until(shown), awaitPromise: true) as? Bool == true)
        return (pages, browser)
    }

    static func focused() -> String {
        """
        (() => { const active = document.activeElement;
          const inner = active?.shadowRoot?.activeElement;
          return inner ? `${active.getAttribute('tip')}:${inner.getAttribute('part')}` : (active?.id || active?.tagName); })()
        """
    }

    /// An element without a `tip` attribute closed or acted on called `invalidate(null)`, whose
    /// promise rejected (found while typing the client strictly, issue 75). It now writes nothing and
    /// settles.
    @Test func anElementWithoutATipClosesWithoutWriting() async throws {
        let (pages, browser) = try await Self.openForms()
        defer { pages.process.terminate() }
        let result = try await browser.evaluate(
            """
            (async () => {
              const before = globalThis.tipsync.replica.lastLocalSeq;
              const element = document.createElement('tipsync-tip');
              document.body.append(element);
              try { await element.close(); await element.perform('learn-more'); }
              catch (error) { return `threw: ${error.message}`; }
              return `wrote ${globalThis.tipsync.replica.lastLocalSeq - before}`;
            })()
            """, awaitPromise: true)
        #expect(result as? String == "wrote 0")
    }

    /// A popover came after the inline tip in the tab order (issue 54, item 2): Tab on its anchor now
    /// enters it, Tab past its last button goes on to what follows the anchor, Shift+Tab walks back;
    /// the page's own Tab order skips it where the element sits.
    @Test func aPopoverIsReachedRightAfterItsAnchor() async throws {
        let (pages, browser) = try await WebBrowserTests.openKeyboardFixture()
        defer { pages.process.terminate() }
        _ = try await browser.evaluate("document.querySelector('#anchor').focus()")
        try await browser.press("Tab")
        #expect(try await browser.evaluate(Self.focused()) as? String == "search:close")
        try await browser.press("Tab")
        #expect(try await browser.evaluate(Self.focused()) as? String == "field")
        try await browser.press("Tab", shift: true)
        #expect(try await browser.evaluate(Self.focused()) as? String == "search:close")
        try await browser.press("Tab", shift: true)
        #expect(try await browser.evaluate(Self.focused()) as? String == "anchor")
        // From the text field on, the page's own order: the inline tip, not the popover again.
        _ = try await browser.evaluate("document.querySelector('#field').focus()")
        try await browser.press("Tab")
        #expect(try await browser.evaluate(Self.focused()) as? String == "welcome:close")
        await browser.quit()
    }

    /// Tips followed the system's dark mode, not the page's (issue 54, item 3): a light page under a
    /// dark system got dark tips. Now the page's `color-scheme` decides; `light dark` follows the system.
    @Test(arguments: [
        (nil as String?, "dark", false), ("light", "dark", false), ("dark", "light", true),
        ("light dark", "dark", true), ("light dark", "light", false),
    ])
    func tipsFollowThePagesColorScheme(_ scheme: String?, _ system: String, _ dark: Bool) async throws {
        let (pages, browser) = try await Self.openForms(scheme: scheme, systemScheme: system)
        defer { pages.process.terminate() }
        for tip in ["welcome", "search"] {
            let background =
                try await browser.evaluate(
                    """
                    getComputedStyle(document.querySelector('tipsync-tip[tip="\(tip)"]').shadowRoot
                      .querySelector('[part~="tip"]')).backgroundColor
                    """) as? String
            #expect(background == (dark ? "rgb(44, 44, 46)" : "rgb(255, 255, 255)"), "\(tip), page \(scheme ?? "none")")
        }
        if scheme == "dark" || scheme == nil {
            try FileManager.default.createDirectory(at: WebBrowserTests.screenshots, withIntermediateDirectories: true)
            let name = scheme ?? "none"
            for width in [1280, 390] {
                try await browser.screenshot(
                    width: width, height: 844,
                    to: WebBrowserTests.screenshots.appendingPathComponent("forms-\(name)-\(width).png").path)
            }
        }
        await browser.quit()
    }

    /// One `--tipsync-max-width` sized inline tips and popovers alike (issue 54, item 3): `100%` for
    /// inline tips made the popover cover the page. The popover has `--tipsync-popover-max-width`.
    /// Titles added `<h2>` to the page's outline: now only with `heading-level`.
    @Test func popoverAndInlineTipsAreSizedApartAndHeadingsAreThePagesChoice() async throws {
        let (pages, browser) = try await Self.openForms()
        defer { pages.process.terminate() }
        let width = { (tip: String) in
            "document.querySelector('tipsync-tip[tip=\"\(tip)\"]').shadowRoot.querySelector('[part~=\"tip\"]').getBoundingClientRect().width"
        }
        let popover = try #require(try await browser.evaluate(width("search")) as? Double)
        let inline = try #require(try await browser.evaluate(width("welcome")) as? Double)
        let page = try #require(
            try await browser.evaluate("document.querySelector('main').getBoundingClientRect().width") as? Double)
        #expect(popover <= 320, "the popover keeps its own width: \(popover)")
        #expect(inline >= page - 1, "the inline tip takes the page's width: \(inline) of \(page)")
        let headings = { (tip: String) in
            "Array.from(document.querySelector('tipsync-tip[tip=\"\(tip)\"]').shadowRoot.querySelectorAll('h1,h2,h3,h4,h5,h6')).map((h) => h.tagName).join()"
        }
        #expect(try await browser.evaluate(headings("welcome")) as? String == "")
        #expect(try await browser.evaluate(headings("search")) as? String == "")
        #expect(try await browser.evaluate(headings("favorite")) as? String == "H2")
        // A symbol the page maps is an image; one it does not map is no image (never the name as text).
        let image = { (tip: String) in
            "document.querySelector('tipsync-tip[tip=\"\(tip)\"]').shadowRoot.querySelector('[part~=\"image\"]')?.textContent ?? 'none'"
        }
        #expect(try await browser.evaluate(image("favorite")) as? String == "")
        #expect(try await browser.evaluate(image("search")) as? String == "none")
        await browser.quit()
    }

    /// axe-core (`axe.min.js`, from the PyPI package `axe-core-python`; `scripts/test` puts it in
    /// `.build-axe/`, or `TIPSYNC_AXE_JS` names it) finds no violation on the demo page and on every
    /// form of tip, before and after closing one.
    @Test(.enabled(if: axeScript != nil || ProcessInfo.processInfo.environment["TIPSYNC_REQUIRE_BROWSER"] != nil))
    func axeFindsNoViolations() async throws {
        let script = try #require(Self.axeScript, "axe.min.js is missing: run scripts/test or set TIPSYNC_AXE_JS")
        let source = try String(contentsOfFile: script, encoding: .utf8)
        let run = """
            axe.run(document, { resultTypes: ['violations'] }).then((result) => JSON.stringify(
              result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)))
            """
        let (pages, browser) = try await Self.openForms()
        defer { pages.process.terminate() }
        _ = try await browser.evaluate(source)
        let forms = try await browser.evaluate(run, awaitPromise: true) as? String
        #expect(forms == "[]", "every form of tip")
        _ = try await browser.evaluate(WebBrowserTests.click("welcome", "close"))
        #expect(try await browser.evaluate(run, awaitPromise: true) as? String == "[]", "after closing a tip")

        let (_, base) = (pages, try #require(pages.log.firstMatch(of: /on (http:\/\/[0-9.:]+)/)).1)
        try await browser.open("\(base)/Examples/web/?device=axe")
        #expect(try await browser.evaluate(WebBrowserTests.ready, awaitPromise: true) as? Bool == true)
        #expect(
            try await browser.evaluate(WebBrowserTests.until(WebBrowserTests.shown("welcome")), awaitPromise: true)
                as? Bool == true)
        _ = try await browser.evaluate(source)
        #expect(try await browser.evaluate(run, awaitPromise: true) as? String == "[]", "the web demo")
        await browser.quit()
    }

    /// What a screen reader is told when a popover appears (issue 54, item 5): a dialog named by the
    /// tip's title and described by its message; an inline tip is a note, named and described alike;
    /// the close buttons are named "Close tip". Read from Chromium's accessibility tree.
    @Test func screenReadersAreToldWhatATipIs() async throws {
        let (pages, browser) = try await Self.openForms()
        defer { pages.process.terminate() }
        let tree = try await browser.accessibilityTree()
        #expect(
            tree.contains(
                .init(role: "dialog", name: "Search every yard", description: "Type a street or a plant name.")),
            "\(tree.filter { $0.role == "dialog" })")
        #expect(
            tree.contains(
                .init(
                    role: "note", name: "Welcome to Yards",
                    description: "Close this tip here and it stays closed everywhere.")))
        #expect(tree.filter { $0.role == "button" && $0.name == "Close tip" }.count == 3)
        #expect(tree.contains { $0.role == "button" && $0.name == "Try it" })
        // Images are decoration: nothing is announced for them.
        #expect(!tree.contains { $0.role == "image" || $0.role == "img" })
        await browser.quit()
    }

    /// A French page shows the catalog's French strings (issue 56, protocol.md §13.10): each element
    /// takes the nearest `lang` — the page's, its section's (`fr-CA`, falling back to `fr` field by
    /// field), or its own (`en`: the tip as written).
    @Test func aFrenchPageShowsTheFrenchStrings() async throws {
        let (pages, base) = try await WebBrowserTests.servePackage()
        defer { pages.process.terminate() }
        let browser = try await HeadlessChromium()
        try await browser.open("\(base)/Tests/TipSyncAgentTests/Fixtures/languages.html")
        #expect(try await browser.evaluate(WebBrowserTests.ready, awaitPromise: true) as? Bool == true)
        let shown = ["welcome", "favorite", "search"].map(WebBrowserTests.shown).joined(separator: " && ")
        #expect(try await browser.evaluate(WebBrowserTests.until(shown), awaitPromise: true) as? Bool == true)
        func text(_ element: String, _ part: String) async throws -> String? {
            try await browser.evaluate(
                "document.querySelector('#\(element)').shadowRoot.querySelector('[part~=\"\(part)\"]')?.textContent")
                as? String
        }
        #expect(try await text("page", "title") == "Bienvenue")
        #expect(try await text("page", "message") == "Fermez-la ici, elle reste fermée partout.")
        #expect(try await text("section", "title") == "Ajouter aux favoris")
        #expect(try await text("section", "action") == "Tantôt")
        #expect(try await text("english", "title") == "Search every yard")
        await browser.quit()
    }

    static var axeScript: String? {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["TIPSYNC_AXE_JS"],
            packageRoot.appendingPathComponent(".build-axe/axe.min.js").path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0) }
    }
}
