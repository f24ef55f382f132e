import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
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

/// Second hard look (issue 31, item 2): a compressed push is taken only whole — its trailer there
/// and checked, nothing after it — and it is inflated to the body limit and not a byte further.
@Suite struct StrictInflationTests {
    static func compressed(_ text: String, _ algorithm: CompressionAlgorithm) throws -> ByteBuffer {
        var plain = ByteBuffer(string: text)
        return try plain.compress(with: algorithm)
    }

    static func code(_ body: ByteBuffer, _ encoding: String, limit: Int = 1 << 20) -> String {
        do {
            let decoded = try ContentCoding.decode(body, encoding: encoding, limit: limit)
            return "ok \(decoded.readableBytes)"
        } catch let error as SyncError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [("gzip", 8), ("deflate", 4)])
    func aStreamWithoutItsTrailerIsRefused(encoding: String, trailer: Int) throws {
        let whole = try Self.compressed(#"{"changes":[]}"#, encoding == "gzip" ? .gzip() : .zlib())
        #expect(Self.code(whole, encoding) == "ok 14")
        let cut = whole.getSlice(at: whole.readerIndex, length: whole.readableBytes - trailer)!
        #expect(Self.code(cut, encoding) == "malformed_json")
        let half = whole.getSlice(at: whole.readerIndex, length: whole.readableBytes / 2)!
        #expect(Self.code(half, encoding) == "malformed_json")
    }

    @Test(arguments: ["gzip", "deflate"])
    func bytesAfterTheStreamAreRefused(encoding: String) throws {
        var body = try Self.compressed(#"{"changes":[]}"#, encoding == "gzip" ? .gzip() : .zlib())
        body.writeString("garbage")
        #expect(Self.code(body, encoding) == "malformed_json")
        // A second gzip member is data after the first one too.
        var twice = try Self.compressed(#"{"changes":[]}"#, .gzip())
        var second = try Self.compressed(#"{"changes":[]}"#, .gzip())
        twice.writeBuffer(&second)
        #expect(Self.code(twice, "gzip") == "malformed_json")
    }

    @Test func aCorruptChecksumIsRefused() throws {
        var body = try Self.compressed(#"{"changes":[]}"#, .gzip())
        let crcAt = body.writerIndex - 8
        body.setInteger(body.getInteger(at: crcAt, as: UInt8.self)! ^ 0xFF, at: crcAt)
        #expect(Self.code(body, "gzip") == "malformed_json")
    }

    /// The limit holds exactly, as for plain bodies: `limit` bytes pass, `limit + 1` do not.
    @Test(arguments: ["gzip", "deflate"])
    func inflationStopsAtExactlyTheLimit(encoding: String) throws {
        let limit = 64 * 1024
        let algorithm: CompressionAlgorithm = encoding == "gzip" ? .gzip() : .zlib()
        let exact = try Self.compressed(String(repeating: " ", count: limit), algorithm)
        #expect(Self.code(exact, encoding, limit: limit) == "ok \(limit)")
        let over = try Self.compressed(String(repeating: " ", count: limit + 1), algorithm)
        #expect(Self.code(over, encoding, limit: limit) == "body_too_large")
        let bomb = try Self.compressed(String(repeating: " ", count: 8 << 20), algorithm)
        #expect(Self.code(bomb, encoding, limit: limit) == "body_too_large")
    }
}
