// What lightning-fs needs from its host, for Node: IndexedDB (fake-indexeddb, in memory) and a
// `navigator` object (lightning-fs reads `navigator.locks` to choose its cross-tab mutex; without
// it, it falls back to a lock kept in IndexedDB). Node 20 has neither. Browsers have both, so this
// lives in the tests only, never in adapters/ or src/.
import 'fake-indexeddb/auto'

if (typeof globalThis.navigator === 'undefined') {
  Object.defineProperty(globalThis, 'navigator', { value: {}, configurable: true, writable: true })
}
