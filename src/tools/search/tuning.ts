// Every number the search is tuned by, each with what it bounds. Changing one changes speed or
// memory, not results, except the bounds a search states in its output (the time budget, the
// longest line, the bm25 limits). bench/search.ts and bench/byte-kernels.ts measured them.
// BM25's k1 and b define its scoring, not a bound: they are BM25_PARAMS in bm25/bm25.ts.

// A page.

/** Time (ms) a grep page runs before it stops at a file boundary with a cursor (not `summary`). */
export const SEARCH_TIME_BUDGET_MS = 30_000
/** Time (ms) a pipeline holds the thread before it gives the event loop a turn. */
export const TURN_MS = 100

// The walk (walk/).

/** Entries asked for per page of a directory listing. */
export const LIST_PAGE = 1000
/** Directory listings fetched ahead of the walk at most, where listings must be waited for. */
export const LIST_PREFETCH = 32

// Reading and scanning a file (scan/).

/** Bytes of a file's first read: files up to this size are read in one call. */
export const FIRST_READ_BYTES = 1 << 20
/** Bytes of each later read of a file larger than its first read. */
export const CHUNK_BYTES = 1 << 20
/** Characters handed to the matcher at once when a file is decoded in blocks. */
export const BLOCK_CHARS = 1 << 20
/** Largest file (bytes) scanned whole in its bytes where a prefilter allows; larger ones stream. */
export const CONTENT_BYTES_MAX = 12 * 1024 * 1024
/** Longest line (UTF-16 units) searched: a file with a longer one is skipped and counted. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024
/** Chunk buffers a thread keeps for the next stream reader, at most. */
export const SPARE_CHUNK_BUFFERS = 4

// Handing work to the workspace's scanner threads (pipeline/).

/** Files a grep scans concurrently on its own thread ahead of the one being consumed. */
export const SCAN_AHEAD = 16
/** Files a grep scans on its own thread before it hands any to the scanner. */
export const SCAN_HERE_FIRST = 64
/** Depth below the start from which directories go to the scanner whole (its threads walk them). */
export const UNIT_DEPTH = 2
/** Files a directory handed over whole counts for in what a grep keeps in flight. */
export const UNIT_WEIGHT = 8
/** Files per batch a grep hands to the scanner. */
export const SCANNER_BATCH = 32
/** Batches in flight per scanner thread, at most. */
export const BATCHES_AHEAD = 16
/** Files' worth of directories handed over in one request, about (by the mean seen so far). */
export const GROUP_TARGET_FILES = 256
/** Directories handed over in one request, at most. */
export const GROUP_MAX = 8
/** Time (ms) a glob walks on its own before it hands directories over (unless `listAfterMs`). */
export const WALK_HERE_MS = 40
/**
 * Files a glob walks on its own before it hands directories over (unless `listAfterMs` is 0):
 * on node_modules (20k files) and the 33k-file bench tree, walking and matching on the calling
 * thread took half to a third of the CPU time that handing directories to two scanner threads
 * did (each thread lists them again into its own listing cache, and the paths come back by
 * message), and less wall time on a loaded machine. Time alone was a poor gate: under load 40 ms
 * pass after a few hundred files.
 */
export const WALK_HERE_FILES = 50_000
/** Directories a glob has handed over and not yet consumed, per scanner thread, at most. */
export const UNITS_PER_THREAD = 16
/** Matching files a glob hands out together, at most. */
export const GLOB_BATCH = 128
/** Files a scanner thread takes together from the walk of a handed-over directory, at most. */
export const UNIT_BATCH = 256

// Finding bytes (bytes/): a cost model in ns on V8, fitted to counting 15 literals in 63 MB of
// JavaScript and TypeScript; it picks a strategy, never changes what is found.

/** Cost of `Uint8Array.prototype.indexOf` passing over one byte. */
export const SCAN_NS = 0.3
/** Cost of checking one place where a finder's anchor byte was found. */
export const CANDIDATE_NS = 27
/** Cost of one Horspool step. */
export const STEP_NS = 4.4
/** How much dearer a Horspool step is when it folds ASCII case. */
export const FOLDED_STEP = 1.3
/** Cost per byte of the WebAssembly SIMD finder (about 9 GB/s, see bench/byte-kernels.ts). */
export const VECTOR_NS = 0.1
/** Shortest span whose line ends the SIMD kernel counts (shorter ones: counted in JavaScript). */
export const VECTOR_COUNT_MIN = 64
/** Bytes at the start of the kernel memory where needles are written for the kernels. */
export const NEEDLE_AREA_BYTES = 65536
/** Longest needle the SIMD kernel searches; longer ones are searched in JavaScript. */
export const NEEDLE_MAX_BYTES = 4096

// bm25 (bm25/).

/**
 * Bounds of a BM25 search. The caller enforces the file and byte limits while it reads (it knows
 * the byte sizes) and states in metadata which one was reached; `rankBm25` ranks whatever it is
 * given.
 */
export const BM25_LIMITS = {
  /** Lines per chunk, the unit ranked. */
  chunkLines: 80,
  /** Files ranked at most (those with the most distinct query terms). */
  maxFiles: 256,
  /** Bytes read of one file at most. */
  maxFileBytes: 512 * 1024,
  /** Bytes read of all files together at most. */
  maxTotalBytes: 16 * 1024 * 1024,
} as const
/** Query terms this long (UTF-16 units) or longer are matched by a map lookup, not by buckets. */
export const LONG_TERM_CHARS = 64
/** Longest text given to `Intl.Segmenter` at once: V8's segment iterator slows on long inputs. */
export const SEGMENT_WINDOW = 256
