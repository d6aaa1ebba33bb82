@testable import RPCHTTP2
import Testing

@Suite("Session memory")
struct NGHTTP2AllocatorTests {
    @Test("a freed block of a class is handed out again for a request of that class")
    func reuse() throws {
        let memory = NGHTTP2Allocator()
        let first = try #require(memory.allocate(100))
        #expect(Int(bitPattern: first) % 16 == 0)
        memory.free(first)
        #expect(memory.freeBlocks == 1)
        let second = try #require(memory.allocate(120))  // the same class (up to 128 bytes)
        #expect(second == first)
        #expect(memory.freeBlocks == 0)
        let other = try #require(memory.allocate(200))  // the next class: a new block
        #expect(other != first)
        memory.free(second)
        memory.free(other)
        memory.free(nil)
        #expect(memory.freeBlocks == 2)
    }

    @Test("a size is served from the smallest class that holds it, from 1 byte to the largest class")
    func classBoundaries() throws {
        #expect(NGHTTP2Allocator.classSizes == [64, 128, 256, 512, 1024, 2048, 4096])
        for (sizeClass, classSize) in NGHTTP2Allocator.classSizes.enumerated() {
            let smallest = sizeClass == 0 ? 1 : NGHTTP2Allocator.classSizes[sizeClass - 1] + 1
            for size in [smallest, classSize] {
                let memory = NGHTTP2Allocator()
                let block = try #require(memory.allocate(size))
                block.initializeMemory(as: UInt8.self, repeating: 0x5A, count: size)
                memory.free(block)
                // Neither the class below nor the one above hands it out; its own class does.
                if sizeClass > 0 {
                    let below = try #require(memory.allocate(smallest - 1))
                    #expect(below != block, "size \(size)")
                    memory.free(below)
                }
                let above = try #require(memory.allocate(classSize + 1))
                #expect(above != block, "size \(size)")
                memory.free(above)
                #expect(memory.allocate(classSize) == block, "size \(size)")
            }
        }
    }

    @Test("blocks larger than every class come from the system and go back to it")
    func large() throws {
        let memory = NGHTTP2Allocator()
        let size = NGHTTP2Allocator.classSizes.last! + 1
        let block = try #require(memory.allocate(size))
        block.initializeMemory(as: UInt8.self, repeating: 0xAB, count: size)
        let grown = try #require(memory.reallocate(block, to: size * 4))
        #expect(grown.load(fromByteOffset: size - 1, as: UInt8.self) == 0xAB)
        memory.free(grown)
        #expect(memory.freeBlocks == 0)
    }

    @Test("realloc keeps the block while the size fits its class and moves the contents when it grows past")
    func reallocate() throws {
        let memory = NGHTTP2Allocator()
        let block = try #require(memory.reallocate(nil, to: 40))  // realloc(nil) is malloc
        for index in 0..<40 { block.storeBytes(of: UInt8(index), toByteOffset: index, as: UInt8.self) }
        #expect(memory.reallocate(block, to: 64) == block)
        let grown = try #require(memory.reallocate(block, to: 3000))
        #expect(grown != block)
        for index in 0..<40 { #expect(grown.load(fromByteOffset: index, as: UInt8.self) == UInt8(index)) }
        #expect(memory.freeBlocks == 1)  // the old block waits for reuse
        memory.free(grown)
    }

    @Test("calloc zeroes a reused block, and an overflowing size is refused")
    func zeroed() throws {
        let memory = NGHTTP2Allocator()
        let dirty = try #require(memory.allocate(64))
        dirty.initializeMemory(as: UInt8.self, repeating: 0xFF, count: 64)
        memory.free(dirty)
        let clean = try #require(memory.allocateZeroed(count: 8, size: 8))
        #expect(clean == dirty)
        #expect((0..<64).allSatisfy { clean.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        #expect(memory.allocateZeroed(count: Int.max, size: 2) == nil)
        memory.free(clean)
    }

    @Test("each class keeps a bounded number of free blocks, fewer of the large ones")
    func bounded() throws {
        for (sizeClass, size) in NGHTTP2Allocator.classSizes.enumerated() {
            let memory = NGHTTP2Allocator()
            let kept = NGHTTP2Allocator.keptPerClass[sizeClass]
            let blocks = try (0..<(kept + 10)).map { _ in try #require(memory.allocate(size)) }
            for block in blocks { memory.free(block) }
            #expect(memory.freeBlocks == kept)
        }
        #expect(NGHTTP2Allocator.keptPerClass == NGHTTP2Allocator.keptPerClass.sorted(by: >))
    }
}
