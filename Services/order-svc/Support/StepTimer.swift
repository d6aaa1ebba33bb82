import Logging
import ServiceKit

/// Measures the steps of one PlaceOrder call, for the "order placed" log line: how long each
/// step took (`basket-ms`, `price-ms`, `record-ms`, `reserve-ms`, `charge-ms`, `paid-ms`,
/// `clear-ms`), which `Benchmarks/order-load` sums into a per-step breakdown.
struct StepTimer {
    private var last = ContinuousClock.now
    private(set) var steps: [(name: String, milliseconds: Double)] = []

    /// Ends the step `name` now; the next step starts.
    mutating func mark(_ name: String) {
        let now = ContinuousClock.now
        steps.append((name, (now - last).seconds * 1e3))
        last = now
    }

    /// The steps as log metadata, e.g. `charge-ms=0.412`.
    var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for step in steps {
            metadata["\(step.name)-ms"] = "\((step.milliseconds * 1000).rounded() / 1000)"
        }
        return metadata
    }
}
