import Testing
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Stored token hashes must not change when the hashing code does: every database holds them.
@Suite struct TokenHasherTests {
    @Test func hashIsLowercaseHexSHA256OfTheTokensUTF8() {
        // FIPS 180-2's test vectors for SHA-256.
        #expect(TokenHasher.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(TokenHasher.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Non-ASCII is hashed as UTF-8: "é" is C3 A9.
        #expect(TokenHasher.hash("é") == "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
    }

    @Test func newTokensHaveThePrefixAnd43Base64URLCharacters() {
        let token = TokenHasher.makeToken()
        #expect(token.hasPrefix("ts_"))
        #expect(token.count == 46)
        #expect(token.dropFirst(3).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(TokenHasher.makeToken(prefix: "tsa_").hasPrefix("tsa_"))
    }
}
