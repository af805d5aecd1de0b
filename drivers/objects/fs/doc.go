// Package fs is an object store in a directory: contracts.ObjectStore for
// one machine (a kernel's volume, development).
//
// Each object is one file under root/objects: its key's segments are
// folders ("name.d") and a file ("name.o"), each segment percent-encoded
// (one longer than 200 bytes encoded becomes its SHA-256), so a key and
// keys under it as a folder both exist and no key reaches outside root.
// The file holds the body, then a trailer with the key, the content type,
// the size and the body's SHA-256 (the ETag).
//
// A put writes a temporary file under root/tmp, syncs it and renames it
// into place, so a reader sees the previous object or the new one whole,
// and a crash leaves at most a temporary file, which New removes. Listing
// reads the trailer of every object under the prefix's folder.
package fs
