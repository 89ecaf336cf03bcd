package coordinator

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
)

// errorSamples holds one error of every class the coordinator and the
// statements package define (cqlError once per constructor), each with the
// code its client must see. TestErrorMessageCoversEveryCode finds the
// classes in the source, so a new one without a sample fails it.
func errorSamples() []struct {
	err  error
	code primitive.ErrorCode
} {
	_, _, syntaxErr := statements.Parse("SELEC x")
	_, _, unsupported := statements.Parse("CREATE ROLE r")
	return []struct {
		err  error
		code primitive.ErrorCode
	}{
		{invalidf("x"), primitive.ErrorCodeInvalid},
		{configErrorf("x"), primitive.ErrorCodeConfigError},
		{unauthorizedf("x"), primitive.ErrorCodeUnauthorized},
		{protocolErrorf("x"), primitive.ErrorCodeProtocolError},
		{keyspaceExists("ks"), primitive.ErrorCodeAlreadyExists},
		{unprepared([]byte{1, 2}), primitive.ErrorCodeUnprepared},
		{&cqlError{Code: primitive.ErrorCodeSyntaxError, Msg: "x"}, primitive.ErrorCodeSyntaxError},
		{&cqlError{Code: primitive.ErrorCodeOverloaded, Msg: "x"}, primitive.ErrorCodeOverloaded},
		{&cqlerr.Unavailable{Consistency: primitive.ConsistencyLevelQuorum, Required: 2, Alive: 1}, primitive.ErrorCodeUnavailable},
		{&staleError{table: "t"}, primitive.ErrorCodeInvalid},
		{timeoutOf(kindRead, primitive.WriteTypeSimple, primitive.ConsistencyLevelOne), primitive.ErrorCodeReadTimeout},
		{timeoutOf(kindWrite, primitive.WriteTypeBatch, primitive.ConsistencyLevelOne), primitive.ErrorCodeWriteTimeout},
		{&cqlerr.CasWriteUnknown{Consistency: primitive.ConsistencyLevelSerial, Received: 1, BlockFor: 2}, protocol.ErrorCodeCasWriteUnknown},
		{&cqlerr.WriteFailure{Consistency: primitive.ConsistencyLevelQuorum, BlockFor: 2, Reasons: []*primitive.FailureReason{{}}}, primitive.ErrorCodeWriteFailure},
		{&cqlerr.ReadFailure{Consistency: primitive.ConsistencyLevelQuorum, BlockFor: 2, Reasons: []*primitive.FailureReason{{}}}, primitive.ErrorCodeReadFailure},
		{&droppedError{err: invalidf("x")}, primitive.ErrorCodeInvalid},
		{syntaxErr, primitive.ErrorCodeSyntaxError},
		{unsupported, primitive.ErrorCodeInvalid},
		{&statements.TypeError{Msg: "x"}, primitive.ErrorCodeInvalid},
		{&statements.UnknownTypeError{Name: "x"}, primitive.ErrorCodeInvalid},
		{fromJSONError(), primitive.ErrorCodeFunctionFailure},
		// It reaches clients only as a FUNCTION_FAILURE's cause or in
		// INSERT JSON's INVALID; alone it would be a server's fault.
		{marshalError(), primitive.ErrorCodeServerError},
		{errors.New("disk on fire"), primitive.ErrorCodeServerError},
	}
}

// fromJSONError is the error fromJson('"abc"') gives for an int.
func fromJSONError() error {
	_, err := types.FromJSONText(datatype.Int, `"abc"`)
	return err
}

// marshalError is the types.MarshalError behind fromJSONError.
func marshalError() error {
	var me *types.MarshalError
	if !errors.As(fromJSONError(), &me) {
		panic("fromJson('\"abc\"') for an int failed without a MarshalError")
	}
	return me
}

// errorGaps are classes errorMessage answers as SERVER_ERROR where
// Cassandra answers another code (want). The test checks each gap is still
// open, so closing one moves it to errorSamples.
var errorGaps = []struct {
	err  error
	want primitive.ErrorCode
	why  string
}{
	{&statements.UnsupportedTypeError{Type: "vector<float, 3>"}, primitive.ErrorCodeInvalid,
		"its callers convert it today (typeErr), but errorMessage does not know it"},
}

// notFromCoordinator are the protocol's error codes no coordinator error
// carries, and why.
var notFromCoordinator = map[primitive.ErrorCode]string{
	primitive.ErrorCodeAuthenticationError: "the frontend's handshake answers it",
	primitive.ErrorCodeIsBootstrapping:     "a node serves only once it has started",
	primitive.ErrorCodeTruncateError:       "TRUNCATE runs on the one local replica; its failures are SERVER_ERROR",
}

// TestErrorMessageCoversEveryCode checks errorMessage, the one place
// internal errors become CQL error codes, against what the source and the
// protocol define rather than a hand-kept list:
//   - every error class declared in coordinator/ and statements/ has a
//     sample, and every sample reaches the client with its code, wrapped
//     or not;
//   - every code a cqlError literal in coordinator/ carries reaches the
//     client as that code;
//   - every code the protocol defines is reached, or is listed in
//     notFromCoordinator with the reason;
//   - no package-level sentinel errors: errorMessage maps classes.
func TestErrorMessageCoversEveryCode(t *testing.T) {
	classes, literalCodes, sentinels := errorDecls(t, ".", "../statements", "../statements/types", "../cqlerr")
	for _, s := range sentinels {
		t.Errorf("sentinel error %s: make it a class errorMessage maps (a cqlError constructor)", s)
	}

	reached := map[primitive.ErrorCode]bool{}
	sampled := map[string]bool{}
	for _, tc := range errorSamples() {
		sampled[errorClass(tc.err)] = true
		for _, err := range []error{tc.err, fmt.Errorf("context: %w", tc.err)} {
			m := errorMessage(err)
			if m.GetErrorCode() != tc.code {
				t.Errorf("%T %v: code 0x%04x, want 0x%04x", tc.err, err, uint32(m.GetErrorCode()), uint32(tc.code))
			}
			if m.GetErrorMessage() == "" {
				t.Errorf("%T %v: empty message", tc.err, err)
			}
		}
		reached[tc.code] = true
	}
	for _, g := range errorGaps {
		sampled[errorClass(g.err)] = true
		if code := errorMessage(g.err).GetErrorCode(); code != primitive.ErrorCodeServerError {
			t.Errorf("%T now answers 0x%04x: move it from errorGaps to errorSamples", g.err, uint32(code))
		}
	}
	for _, c := range classes {
		if !sampled[c] {
			t.Errorf("error class %s has no sample in errorSamples", c)
		}
	}

	for _, code := range literalCodes {
		if got := errorMessage(&cqlError{Code: code, Msg: "x"}).GetErrorCode(); got != code {
			t.Errorf("a cqlError with code 0x%04x reaches the client as 0x%04x", uint32(code), uint32(got))
		}
		reached[code] = true
	}

	for code := primitive.ErrorCode(0); code <= 0xffff; code++ {
		if !code.IsValid() {
			continue
		}
		why, listed := notFromCoordinator[code]
		switch {
		case reached[code] && listed:
			t.Errorf("code 0x%04x is reached, yet listed in notFromCoordinator (%s)", uint32(code), why)
		case !reached[code] && !listed:
			t.Errorf("code 0x%04x (%v) is neither reached by a sample nor listed in notFromCoordinator", uint32(code), code)
		}
	}

	if m := errorMessage(keyspaceExists("ks")).(*message.AlreadyExists); m.Keyspace != "ks" || m.Table != "" {
		t.Errorf("ALREADY_EXISTS carries %q.%q", m.Keyspace, m.Table)
	}
	if m := errorMessage(unprepared([]byte{1, 2})).(*message.Unprepared); string(m.Id) != "\x01\x02" {
		t.Errorf("UNPREPARED carries id %x", m.Id)
	}
	ua := &cqlerr.Unavailable{Consistency: primitive.ConsistencyLevelQuorum, Required: 2, Alive: 1}
	if m := errorMessage(ua).(*message.Unavailable); m.Consistency != ua.Consistency || m.Required != 2 || m.Alive != 1 {
		t.Errorf("UNAVAILABLE carries %v %d/%d", m.Consistency, m.Alive, m.Required)
	}
}

// errorClass names err's type as errorDecls does: package.Type.
func errorClass(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return path.Base(t.PkgPath()) + "." + t.Name()
}

// errorDecls reads the non-test Go files of dirs for the error classes they
// declare (types with an Error() string method, as package.Type), the codes
// of the cqlError literals they write, and their package-level sentinel
// errors (vars set by errors.New or fmt.Errorf).
func errorDecls(t *testing.T, dirs ...string) (classes []string, codes []primitive.ErrorCode, sentinels []string) {
	t.Helper()
	codeByName := map[string]primitive.ErrorCode{}
	for code := primitive.ErrorCode(0); code <= 0xffff; code++ {
		if code.IsValid() {
			codeByName[errorCodeName(code)] = code
		}
	}
	seenCode := map[primitive.ErrorCode]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			pkg := f.Name.Name
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if typ, ok := errorMethodReceiver(d); ok {
						classes = append(classes, pkg+"."+typ)
					}
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, spec := range d.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, v := range vs.Values {
							if isErrorConstructor(v) {
								sentinels = append(sentinels, pkg+"."+vs.Names[i].Name)
							}
						}
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "cqlError" {
					return true
				}
				for _, e := range lit.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, _ := kv.Key.(*ast.Ident)
					sel, _ := kv.Value.(*ast.SelectorExpr)
					if key == nil || key.Name != "Code" || sel == nil {
						continue
					}
					code, ok := codeByName[sel.Sel.Name]
					if !ok {
						t.Errorf("%s: cqlError with code %s, not a protocol error code", fset.Position(kv.Pos()), sel.Sel.Name)
						continue
					}
					if !seenCode[code] {
						seenCode[code] = true
						codes = append(codes, code)
					}
				}
				return true
			})
		}
	}
	if len(classes) == 0 || len(codes) == 0 {
		t.Fatalf("found %d error classes and %d cqlError codes in %v: is the test running in coordinator/?", len(classes), len(codes), dirs)
	}
	return classes, codes, sentinels
}

// errorCodeName is the name of code's constant in the primitive package,
// which its String spells out: "ErrorCode SyntaxError [0x00002000]".
func errorCodeName(code primitive.ErrorCode) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(code.String(), "ErrorCode "), " ")
	return "ErrorCode" + name
}

// errorMethodReceiver is the receiver type of an Error() string method.
func errorMethodReceiver(d *ast.FuncDecl) (string, bool) {
	if d.Recv == nil || d.Name.Name != "Error" || len(d.Type.Params.List) != 0 ||
		d.Type.Results == nil || len(d.Type.Results.List) != 1 {
		return "", false
	}
	if res, ok := d.Type.Results.List[0].Type.(*ast.Ident); !ok || res.Name != "string" {
		return "", false
	}
	typ := d.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

// isErrorConstructor reports whether e calls errors.New or fmt.Errorf.
func isErrorConstructor(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// A panic while running a request is answered as a SERVER_ERROR on its
// stream, on a worker and on the event loop alike, instead of ending the
// process.
func TestPanicAnswersServerError(t *testing.T) {
	c := &Coordinator{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	req := &protocol.Request{Version: primitive.ProtocolVersion4, Message: &message.Query{Query: "SELECT"}}
	check := func(name string, resp *protocol.Response) {
		t.Helper()
		se, ok := resp.Message.(*message.ServerError)
		if !ok || !strings.Contains(se.ErrorMessage, "boom") {
			t.Fatalf("%s: answered %#v, want a SERVER_ERROR naming the panic", name, resp.Message)
		}
	}
	check("worker", func() (resp *protocol.Response) {
		defer c.recoverRequest(req, &resp)
		panic("boom")
	}())
	resp, taken := func() (resp *protocol.Response, taken bool) {
		defer c.recoverInline(req, &resp, &taken)
		panic("boom")
	}()
	if !taken {
		t.Fatal("a request that panicked inline was not taken")
	}
	check("inline", resp)
}

// A lightweight transaction's timeout carries its contentions, which
// protocol v5 encodes for write type CAS; an Unavailable with its own
// message keeps it.
func TestCASErrors(t *testing.T) {
	m := errorMessage(&cqlerr.WriteTimeout{Consistency: primitive.ConsistencyLevelSerial, BlockFor: 2, WriteType: primitive.WriteTypeCas, Contentions: 3})
	if wt, ok := m.(*message.WriteTimeout); !ok || wt.Contentions != 3 || wt.WriteType != primitive.WriteTypeCas {
		t.Fatalf("%#v", m)
	}
	ua := &cqlerr.Unavailable{Consistency: primitive.ConsistencyLevelSerial, Required: 4, Alive: 3, Message: "Cannot perform LWT operation as there is more than one (2) pending range movement"}
	if m, ok := errorMessage(ua).(*message.Unavailable); !ok || m.ErrorMessage != ua.Message || m.Required != 4 {
		t.Fatalf("%#v", m)
	}
}
