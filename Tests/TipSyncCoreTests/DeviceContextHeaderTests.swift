import Testing
import TipSyncCore

/// The `TipSync-Context` header (protocol.md §5): what a device reports of itself so the console can
/// say what each device shows (issue 73, item 4). The same strings are checked in
/// clients/web/test/targeting.test.js.
@Suite struct DeviceContextHeaderTests {
    @Test func theHeaderCarriesPlatformVersionAndLocalePercentEncoded() {
        let context = DeviceContext(platform: "ios", appVersion: "2.4.1 (beta)", locale: "fr-CA", account: "alice")
        #expect(context.headerValue == "platform=ios; appVersion=2.4.1%20%28beta%29; locale=fr-CA")
        let read = DeviceContext(headerValue: context.headerValue!)
        #expect(read == DeviceContext(platform: "ios", appVersion: "2.4.1 (beta)", locale: "fr-CA"), "no account")
        #expect(DeviceContext(platform: "web").headerValue == "platform=web")
        #expect(DeviceContext(account: "alice").headerValue == nil)
        #expect(DeviceContext(appVersion: "é;=").headerValue == "appVersion=%C3%A9%3B%3D")
    }

    @Test func whatCannotBeReadIsIgnored() {
        #expect(DeviceContext(headerValue: "platform = linux ;colour=red; locale") == DeviceContext(platform: "linux"))
        #expect(DeviceContext(headerValue: "platform=%ZZ; locale=de") == DeviceContext(locale: "de"))
        #expect(DeviceContext(headerValue: "appVersion=" + String(repeating: "9", count: 65)) == nil)
        #expect(DeviceContext(headerValue: "") == nil)
        #expect(DeviceContext(headerValue: "platform=%C3") == nil, "not UTF-8")
    }
}
