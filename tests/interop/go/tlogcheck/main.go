// tlogcheck reads a Tally engine log the way any Go tlog client would, with
// code no one at Tally wrote: golang.org/x/mod/sumdb/note opens the
// checkpoint with the published verifier key, golang.org/x/mod/sumdb/tlog
// rebuilds the tree hash from the C2SP tlog-tiles through TileHashReader,
// and proves and checks the inclusion of a seal leaf read from the entry
// bundles.
//
// Usage: tlogcheck <base> <verifier key> [<log binding>]
//
//	tlogcheck -session <base> <engine verifier key>
//
// <base> is a URL prefix (http://host:port/log) or a directory written by
// `tally tiles export`. With a third argument, a day's log binding (the
// C2SP tlog-proof `tally export --log-key` writes as log-proof.tlog-proof)
// is checked too: its checkpoint opened with the key, and its extra leaf
// included at its index by tlog.CheckRecord. Prints one "ok ..." line per
// check; exits 1 on the first failure.
//
// With -session, <base> is one session's tiles (tally serve's
// /sessions/<id>/tiles, or `tally tiles export --session`): the checkpoint
// is a session checkpoint signed by the engine key (origin <key name>/<64
// hex>), the entries are session entries (canonical JSON), and every entry's
// inclusion is proved from the tiles and checked. A bearer token for the
// server is read from $TLOGCHECK_TOKEN.
//
// Build (Debian: golang-go, golang-golang-x-mod-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o tlogcheck ./tests/interop/go/tlogcheck
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const tileHeight = 8

type source struct {
	base  string
	cache map[string][]byte
}

// read fetches one resource below the prefix (a path such as "tile/0/000"),
// each once: tiles and bundles do not change (the checkpoint is read once).
func (s source) read(path string) ([]byte, error) {
	if b, ok := s.cache[path]; ok {
		return b, nil
	}
	b, err := s.fetch(path)
	if err == nil {
		s.cache[path] = b
	}
	return b, err
}

func (s source) fetch(path string) ([]byte, error) {
	if strings.HasPrefix(s.base, "http://") || strings.HasPrefix(s.base, "https://") {
		req, err := http.NewRequest("GET", strings.TrimSuffix(s.base, "/")+"/"+path, nil)
		if err != nil {
			return nil, err
		}
		if t := os.Getenv("TLOGCHECK_TOKEN"); t != "" {
			req.Header.Set("Authorization", "Bearer "+t)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	return os.ReadFile(filepath.Join(s.base, filepath.FromSlash(path)))
}

// tilesPath turns tlog's tile path (tile/<H>/<L>/<N>[.p/<W>]) into the
// C2SP tlog-tiles one, which drops the height (tile/<L>/<N>[.p/<W>]).
func tilesPath(t tlog.Tile) string {
	p := t.Path()
	prefix := fmt.Sprintf("tile/%d/", t.H)
	return "tile/" + strings.TrimPrefix(p, prefix)
}

type tileReader struct{ src source }

func (r tileReader) Height() int { return tileHeight }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := r.src.read(tilesPath(t))
		if err != nil {
			return nil, err
		}
		if len(data) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("%s: %d bytes, want %d", tilesPath(t), len(data), t.W*tlog.HashSize)
		}
		out[i] = data
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// parseCheckpoint reads a C2SP tlog-checkpoint note text: origin, size, base64 root.
func parseCheckpoint(text string) (origin string, tree tlog.Tree, err error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		return "", tree, errors.New("checkpoint: fewer than three lines")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return "", tree, errors.New("checkpoint: bad size")
	}
	h, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize {
		return "", tree, errors.New("checkpoint: bad root")
	}
	tree.N = n
	copy(tree.Hash[:], h)
	return lines[0], tree, nil
}

// entries reads the leaves [0, n) from the entry bundles (big-endian uint16 length, bytes).
func entries(src source, n int64) ([][]byte, error) {
	var out [][]byte
	for start := int64(0); start < n; start += 256 {
		w := n - start
		path := "tile/entries/" + strings.TrimPrefix(tlog.Tile{H: tileHeight, L: 0, N: start / 256, W: 256}.Path(), "tile/8/0/")
		if w < 256 {
			path = "tile/entries/" + strings.TrimPrefix(tlog.Tile{H: tileHeight, L: 0, N: start / 256, W: int(w)}.Path(), "tile/8/0/")
		}
		data, err := src.read(path)
		if err != nil {
			return nil, err
		}
		for len(data) > 0 {
			if len(data) < 2 {
				return nil, fmt.Errorf("%s: truncated length", path)
			}
			l := int(data[0])<<8 | int(data[1])
			if len(data) < 2+l {
				return nil, fmt.Errorf("%s: truncated entry", path)
			}
			out = append(out, data[2:2+l])
			data = data[2+l:]
		}
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("entry bundles hold %d entries, want %d", len(out), n)
	}
	return out, nil
}

// open reads and opens the checkpoint: signed by the key, origin the key name
// (the engine log) or <key name>/<64 lowercase hex> (a session).
func open(src source, vkey string, session bool) (string, tlog.Tree, note.Verifier, error) {
	var tree tlog.Tree
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return "", tree, nil, fmt.Errorf("verifier key: %v", err)
	}
	raw, err := src.read("checkpoint")
	if err != nil {
		return "", tree, nil, err
	}
	n, err := note.Open(raw, note.VerifierList(verifier))
	if err != nil {
		return "", tree, nil, fmt.Errorf("checkpoint note: %v", err)
	}
	origin, tree, err := parseCheckpoint(n.Text)
	if err != nil {
		return "", tree, nil, err
	}
	want := origin == verifier.Name()
	if session {
		id := strings.TrimPrefix(origin, verifier.Name()+"/")
		want = len(id) == 64 && id != origin && strings.Trim(id, "0123456789abcdef") == ""
	}
	if !want {
		return "", tree, nil, fmt.Errorf("checkpoint origin %q is not the origin key %q signs", origin, verifier.Name())
	}
	return origin, tree, verifier, nil
}

// runSession reads a session's tiles: the tree hash from the tiles, and every
// entry of the bundles proved and checked against the checkpoint.
// fromTiles rebuilds the tree hash from the tiles, checks it against the
// checkpoint's, and reads every entry from the bundles (engine log and session alike).
func fromTiles(src source, tree tlog.Tree) (tlog.HashReader, [][]byte, error) {
	hr := tlog.TileHashReader(tree, tileReader{src})
	th, err := tlog.TreeHash(tree.N, hr)
	if err != nil {
		return nil, nil, fmt.Errorf("tree hash from tiles: %v", err)
	}
	if th != tree.Hash {
		return nil, nil, fmt.Errorf("tree hash from tiles %v, checkpoint %v", th, tree.Hash)
	}
	fmt.Printf("ok tree hash from tiles %v\n", th)
	leaves, err := entries(src, tree.N)
	if err != nil {
		return nil, nil, err
	}
	return hr, leaves, nil
}

func runSession(base, vkey string) error {
	src := source{base, map[string][]byte{}}
	origin, tree, verifier, err := open(src, vkey, true)
	if err != nil {
		return err
	}
	fmt.Printf("ok session checkpoint %s size %d signed by %s\n", origin, tree.N, verifier.Name())
	hr, leaves, err := fromTiles(src, tree)
	if err != nil {
		return err
	}
	for i, l := range leaves {
		if !bytes.HasPrefix(l, []byte("{")) {
			return fmt.Errorf("entry %d is not a session entry", i)
		}
		proof, err := tlog.ProveRecord(tree.N, int64(i), hr)
		if err != nil {
			return fmt.Errorf("inclusion proof of entry %d: %v", i, err)
		}
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, int64(i), tlog.RecordHash(l)); err != nil {
			return fmt.Errorf("inclusion of entry %d: %v", i, err)
		}
	}
	last := leaves[len(leaves)-1]
	if len(last) > 60 {
		last = last[:60]
	}
	fmt.Printf("ok %d entries included; entry %d: %s\n", len(leaves), len(leaves)-1, last)
	return nil
}

func run(base, vkey string) error {
	src := source{base, map[string][]byte{}}
	origin, tree, verifier, err := open(src, vkey, false)
	if err != nil {
		return err
	}
	fmt.Printf("ok checkpoint %s size %d signed by %s\n", origin, tree.N, verifier.Name())

	hr, leaves, err := fromTiles(src, tree)
	if err != nil {
		return err
	}
	tag := []byte("tally/v1/engine-log-leaf\x00")
	seal := int64(-1)
	for i, l := range leaves {
		if !bytes.HasPrefix(l, tag) {
			return fmt.Errorf("leaf %d has no engine-log tag", i)
		}
		if bytes.Contains(l, []byte(`"seal":true`)) {
			seal = int64(i)
		}
	}
	if seal < 0 {
		return errors.New("no seal leaf in the log")
	}
	proof, err := tlog.ProveRecord(tree.N, seal, hr)
	if err != nil {
		return fmt.Errorf("inclusion proof of leaf %d: %v", seal, err)
	}
	if err := tlog.CheckRecord(proof, tree.N, tree.Hash, seal, tlog.RecordHash(leaves[seal])); err != nil {
		return fmt.Errorf("inclusion of leaf %d: %v", seal, err)
	}
	fmt.Printf("ok seal leaf %d included (%d proof hashes): %s\n", seal, len(proof), leaves[seal][len(tag):])
	return nil
}

// checkBinding reads a C2SP tlog-proof (header, extra, index, proof hashes,
// blank line, signed checkpoint) and checks it with sumdb/note and sumdb/tlog.
func checkBinding(file, vkey string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("verifier key: %v", err)
	}
	text := string(raw)
	blank := strings.Index(text, "\n\n")
	if blank < 0 {
		return errors.New("binding: no blank line before the checkpoint")
	}
	head := strings.Split(text[:blank], "\n")
	if len(head) < 3 || head[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(head[1], "extra ") || !strings.HasPrefix(head[2], "index ") {
		return errors.New("binding: not a tlog-proof with an extra line")
	}
	leaf, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(head[1], "extra "))
	if err != nil {
		return fmt.Errorf("binding: extra: %v", err)
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(head[2], "index "), 10, 64)
	if err != nil {
		return fmt.Errorf("binding: index: %v", err)
	}
	var proof tlog.RecordProof
	for _, l := range head[3:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != tlog.HashSize {
			return errors.New("binding: bad proof hash")
		}
		var x tlog.Hash
		copy(x[:], h)
		proof = append(proof, x)
	}
	n, err := note.Open([]byte(text[blank+2:]), note.VerifierList(verifier))
	if err != nil {
		return fmt.Errorf("binding checkpoint note: %v", err)
	}
	origin, tree, err := parseCheckpoint(n.Text)
	if err != nil {
		return err
	}
	if origin != verifier.Name() {
		return fmt.Errorf("binding checkpoint origin %q is not the key name %q", origin, verifier.Name())
	}
	if err := tlog.CheckRecord(proof, tree.N, tree.Hash, index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("binding: inclusion of leaf %d: %v", index, err)
	}
	fmt.Printf("ok binding leaf %d included in %s size %d: %s\n", index, origin, tree.N, bytes.TrimPrefix(leaf, []byte("tally/v1/engine-log-leaf\x00")))
	return nil
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-session" {
		if err := runSession(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "tlogcheck:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: tlogcheck <base URL or directory> <verifier key> [<log binding .tlog-proof>] | -session <base> <engine verifier key>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "tlogcheck:", err)
		os.Exit(1)
	}
	if len(os.Args) == 4 {
		if err := checkBinding(os.Args[3], os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "tlogcheck:", err)
			os.Exit(1)
		}
	}
}
