import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync

@testable import TipSyncServer

/// Compressed pull pages and push bodies (protocol.md section 5): optional for clients, never a way
/// around the body limit.
@Suite struct ContentCodingTests {
    static func headers(_ fixture: ServerFixture, _ extra: [(HTTPField.Name, String)]) -> HTTPFields {
        var headers = fixture.headers("phone")
        for (name, value) in extra { headers[name] = value }
        return headers
    }

    static func donations(_ count: Int) -> [Change] {
        (1...count).map { seq in
            change(
                "phone", Int64(seq),
                .donation(event: "opened", id: "phone:\(seq)", date: 1_700_000_000_000 + Int64(seq), info: nil))
        }
    }

    @Test func pullPagesAreCompressedOnlyWhenAskedAndLargeEnough() async throws {
        let fixture = try await ServerFixture.make()
        try await fixture.app().test(.router) { client in
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: Self.donations(200)))
            ) { #expect($0.status == .ok) }
            let plain = try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("laptop")) {
                response -> PullResponse in
                #expect(response.headers[.contentEncoding] == nil)
                #expect(response.headers[.vary] == "Accept-Encoding")
                return try decode(PullResponse.self, response.body)
            }
            for (accept, expected) in [
                ("gzip, deflate, br", "gzip"), ("deflate", "deflate"), ("gzip;q=0, deflate", "deflate"),
            ] {
                var headers = fixture.headers("laptop")
                headers[.acceptEncoding] = accept
                try await client.execute(uri: "/v1/pull", method: .get, headers: headers) { response in
                    #expect(response.headers[.contentEncoding] == expected, "\(accept)")
                    var compressed = response.body
                    let algorithm: CompressionAlgorithm = expected == "gzip" ? .gzip() : .zlib()
                    let inflated = try compressed.decompress(with: algorithm)
                    #expect(inflated.readableBytes > compressed.readableBytes * 3)
                    let page = try decode(PullResponse.self, inflated)
                    #expect(page.changes == plain.changes && page.cursor == plain.cursor)
                }
            }
            for accept in ["identity", "gzip;q=0", "br"] {
                var headers = fixture.headers("laptop")
                headers[.acceptEncoding] = accept
                try await client.execute(uri: "/v1/pull", method: .get, headers: headers) {
                    #expect($0.headers[.contentEncoding] == nil, "\(accept)")
                }
            }
            // A small page is not worth it.
            var headers = fixture.headers("laptop")
            headers[.acceptEncoding] = "gzip"
            try await client.execute(uri: "/v1/pull?limit=1", method: .get, headers: headers) {
                #expect($0.headers[.contentEncoding] == nil)
            }
        }
    }

    @Test func compressedPushesAreAcceptedAndNeverBeatTheBodyLimit() async throws {
        let fixture = try await ServerFixture.make()
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 64 * 1024
        try await fixture.app(configuration: configuration).test(.router) { client in
            var json = ByteBuffer(bytes: try JSONCoding.encoder.encode(PushRequest(changes: Self.donations(50))))
            let gzipped = try json.compress(with: .gzip())
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(fixture, [(.contentEncoding, "gzip")]),
                body: gzipped
            ) { response in
                #expect(response.status == .ok)
                let outcome = try decode(PushResponse.self, response.body)
                #expect(outcome.accepted == 50)
            }
            // 1 MB of spaces inflates past the 64 KiB limit: refused like a large body, nothing stored.
            var bomb = ByteBuffer(string: #"{"changes":["# + String(repeating: " ", count: 1 << 20) + "]}")
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(fixture, [(.contentEncoding, "gzip")]),
                body: try bomb.compress(with: .gzip())
            ) { response in
                #expect(response.status == .contentTooLarge)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "body_too_large")
            }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(fixture, [(.contentEncoding, "gzip")]),
                body: ByteBuffer(string: "not gzip at all")
            ) { response in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "malformed_json")
            }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: Self.headers(fixture, [(.contentEncoding, "br")]),
                body: gzipped
            ) { response in
                #expect(response.status == .unsupportedMediaType)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.message.contains("'br'"))
            }
            #expect(try await fixture.store.logCount(account: fixture.accountID) == 50)
        }
    }
}
