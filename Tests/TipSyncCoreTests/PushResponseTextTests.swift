import Foundation
import Testing

@testable import TipSyncCore

/// The push answer the server writes by hand is, byte for byte, what the JSON encoder wrote.
@Suite struct PushResponseTextTests {
    @Test(arguments: [
        PushResponse(
            accepted: 1, duplicates: 0, highestSeq: 1, serverTime: 1_764_000_000_000, generation: "a1b2c3d4e5f60718"),
        PushResponse(accepted: 0, duplicates: 1000, highestSeq: .max, serverTime: 0, generation: nil),
        PushResponse(accepted: 3, duplicates: 2, highestSeq: 0, serverTime: -1, generation: "quote\" back\\slash / é"),
    ])
    func theTextIsWhatTheEncoderWrites(response: PushResponse) throws {
        let encoded = String(decoding: try JSONCoding.encoder.encode(response), as: UTF8.self)
        #expect(response.jsonText == encoded)
        #expect(try JSONCoding.decode(PushResponse.self, from: Array(response.jsonText.utf8)) == response)
    }
}
