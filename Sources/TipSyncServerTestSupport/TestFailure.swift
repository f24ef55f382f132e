/// A test's own failure, thrown where a value it needs is missing.
package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
