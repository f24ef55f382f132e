/// How a tip's `image` string reads on every platform (protocol.md §13.1, "Images"): a reference to
/// an image file, or the name of a symbol (an SF Symbol such as `star`). One catalog serves every
/// platform: Apple clients show a symbol as that system symbol; a web client shows a reference as
/// that image and a symbol only through a map the app gives it. No client shows the name as text.
public enum TipImage: Sendable, Hashable {
    /// A URL (`https:`, `data:`, any `scheme:`), a path (`/`, `./`, `../`) or a file name with an
    /// image extension (`icons/star.svg`).
    case reference(String)
    /// Anything else: a symbol's name (`star`, `magnifyingglass`).
    case symbol(String)

    static let extensions = [".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif"]

    /// How `image` reads; `nil` for no image (absent or empty).
    public init?(_ image: String?) {
        guard let image, !image.isEmpty else { return nil }
        self = Self.isReference(image) ? .reference(image) : .symbol(image)
    }

    /// The string as the catalog holds it.
    public var name: String {
        switch self {
        case .reference(let value), .symbol(let value): value
        }
    }

    static func isReference(_ image: String) -> Bool {
        if image.hasPrefix("/") || image.hasPrefix("./") || image.hasPrefix("../") { return true }
        let lowered = image.lowercased()
        if extensions.contains(where: { lowered.hasSuffix($0) }) { return true }
        // A scheme: a letter, then letters, digits, `+`, `.` or `-`, then `:` (RFC 3986).
        let scalars = Array(image.unicodeScalars)
        guard let first = scalars.first, first.isASCIILetter else { return false }
        for scalar in scalars.dropFirst() {
            if scalar == ":" { return true }
            guard scalar.isASCIILetter || ("0"..."9").contains(scalar) || "+.-".unicodeScalars.contains(scalar) else {
                return false
            }
        }
        return false
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
