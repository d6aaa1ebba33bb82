/// A contract that cannot be used as written, or a contract file that cannot be read or written.
package struct ContractError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and, where it helps, what to do.
    package let description: String

    /// An error saying `description`.
    package init(_ description: String) { self.description = description }
}
