// Package procmem reads a Linux process's memory from
// /proc/<pid>/smaps_rollup, for the benchmarks that report what a kernel,
// a sandbox child or a tenant costs in memory.
package procmem
