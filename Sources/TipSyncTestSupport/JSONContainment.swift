public import TipSyncCore

extension JSONValue {
    /// Where this value fails to contain `wanted` (the conformance corpus's `expect.json` and
    /// `expect.includes`, conformance/README): objects need every wanted member (more are allowed),
    /// arrays the same length with each element contained (`inOrder`, for `includes`: each wanted
    /// element contained in a later element than the one before, others allowed between), scalars
    /// equality of value and canonical text. `nil` when it contains it.
    public func containmentDifference(_ wanted: JSONValue, at path: String, inOrder: Bool = false) -> String? {
        switch (self, wanted) {
        case (.object(let have), .object(let want)):
            for (key, value) in want {
                guard let member = have[key] else { return "\(path).\(key): missing" }
                if let difference = member.containmentDifference(value, at: "\(path).\(key)", inOrder: inOrder) {
                    return difference
                }
            }
            return nil
        case (.array(let have), .array(let want)) where inOrder:
            var next = have.startIndex
            for (index, element) in want.enumerated() {
                guard
                    let found = have[next...].firstIndex(where: {
                        $0.containmentDifference(element, at: "", inOrder: true) == nil
                    })
                else {
                    return
                        "\(path)[\(index)]: \(element.canonicalText) is not among the elements after the last one found"
                }
                next = found + 1
            }
            return nil
        case (.array(let have), .array(let want)):
            guard have.count == want.count else { return "\(path): \(have.count) elements, expected \(want.count)" }
            for (index, pair) in zip(have, want).enumerated() {
                if let difference = pair.0.containmentDifference(pair.1, at: "\(path)[\(index)]") { return difference }
            }
            return nil
        default:
            return self == wanted && canonicalText == wanted.canonicalText
                ? nil : "\(path): got \(canonicalText), expected \(wanted.canonicalText)"
        }
    }
}
