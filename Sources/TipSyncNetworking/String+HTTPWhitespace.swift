extension Substring {
    /// Without leading and trailing optional whitespace as HTTP defines it — spaces and horizontal
    /// tabs (RFC 9110, section 5.6.3) — which header values and their parts are compared without.
    /// Plain Swift over the UTF-8 bytes: Foundation's `trimmingCharacters(in: .whitespaces)` goes
    /// through `NSString` and cost about 3% of a single-change push's CPU at its three uses per push.
    package var trimmingHTTPWhitespace: Substring {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isWhitespace($0) }),
            let last = utf8.lastIndex(where: { !isWhitespace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }
}

extension String {
    /// ``Substring/trimmingHTTPWhitespace`` of the whole string.
    package var trimmingHTTPWhitespace: Substring { self[...].trimmingHTTPWhitespace }
}
