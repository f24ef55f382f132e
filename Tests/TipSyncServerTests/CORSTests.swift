import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// A web page can call the device API (issue 34, item 1): a preflight `OPTIONS /v1/pull` got `405`
/// and no CORS header. Allowed origins now get preflights answered and CORS headers on every `/v1`
/// answer; other origins, the admin API and the console stay closed.
@Suite struct CORSTests {
    static let app = "https://app.example.com"

    static func configuration(_ origins: Set<String>) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.corsOrigins = origins
        return configuration
    }

    @Test func anAllowedOriginsPreflightIsAnswered() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        try await fixture.app(configuration: Self.configuration([Self.app])).test(.router) { client in
            let preflight: HTTPFields = [
                .origin: Self.app, .accessControlRequestMethod: "POST",
                .accessControlRequestHeaders: "authorization, content-type",
            ]
            try await client.execute(uri: "/v1/push", method: .options, headers: preflight) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == Self.app)
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
                #expect(response.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
                #expect(response.headers[.accessControlMaxAge] == "600")
            }
            // The real request: CORS headers on success and on errors alike.
            var headers = fixture.headers("phone")
            headers[.origin] = Self.app
            try await client.execute(uri: "/v1/pull", method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == Self.app)
                #expect(response.headers[.accessControlExposeHeaders] == "Retry-After, ETag")
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            try await client.execute(uri: "/v1/pull", method: .get, headers: [.origin: Self.app]) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.accessControlAllowOrigin] == Self.app)
            }
        }
    }

    @Test func otherOriginsAndOtherRoutesGetNoCORS() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        try await fixture.app(configuration: Self.configuration([Self.app])).test(.router) { client in
            let evil: HTTPFields = [.origin: "https://evil.example", .accessControlRequestMethod: "GET"]
            try await client.execute(uri: "/v1/pull", method: .options, headers: evil) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            let admin: HTTPFields = [.origin: Self.app, .accessControlRequestMethod: "GET"]
            try await client.execute(uri: "/admin/v1/accounts", method: .options, headers: admin) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
        // Without --cors-origins (the default) nothing is opened.
        try await fixture.app().test(.router) { client in
            var headers = fixture.headers("phone")
            headers[.origin] = Self.app
            try await client.execute(uri: "/v1/pull", method: .get, headers: headers) {
                #expect($0.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    @Test func aWildcardAllowsAnyOrigin() async throws {
        let fixture = try await ServerFixture.make(devices: ["phone"])
        try await fixture.app(configuration: Self.configuration(["*"])).test(.router) { client in
            var headers = fixture.headers("phone")
            headers[.origin] = "http://localhost:5173"
            try await client.execute(uri: "/v1/pull", method: .get, headers: headers) {
                #expect($0.headers[.accessControlAllowOrigin] == "*")
            }
        }
    }
}
