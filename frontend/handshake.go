package frontend

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/panjf2000/gnet/v2"

	"github.com/cqld/cqld/protocol"
)

// CQLVersion is the CQL language version cqld reports.
const CQLVersion = "3.4.5"

func supportedOptions() map[string][]string {
	return map[string][]string{
		"CQL_VERSION":       {CQLVersion},
		"PROTOCOL_VERSIONS": protocol.SupportedVersions,
		"COMPRESSION":       {protocol.CompressionLZ4, protocol.CompressionSnappy},
		// Opt-in extensions (prepare_batch.go).
		protocol.PrepareBatchExtension: {protocol.PrepareBatchVersion},
	}
}

// startup settles the connection's version and compression and answers
// READY, or AUTHENTICATE when clients must log in. For v5, everything
// after that answer travels in segments, as in Cassandra.
func (cn *conn) startup(h protocol.Header, body []byte) gnet.Action {
	switch cn.state {
	case stateAuth:
		cn.replyError(h, cn.unexpected(h.OpCode))
		return gnet.None
	case stateReady:
		cn.replyError(h, "Unexpected message STARTUP, the connection is already initialized")
		return gnet.None
	}
	req, err := protocol.DecodeRequest(h, body, nil, cn.s.opts.MaxFrameSize)
	if err != nil {
		cn.replyError(h, err.Error())
		return gnet.None
	}
	opts := req.Message.(*message.Startup).Options
	cql, ok := opts["CQL_VERSION"]
	if !ok {
		cn.replyError(h, "Missing value CQL_VERSION in STARTUP message")
		return gnet.None
	}
	if !strings.HasPrefix(cql, "3.") && cql != "3" {
		cn.replyError(h, fmt.Sprintf("Unsupported CQL version %s, this server supports %s", cql, CQLVersion))
		return gnet.None
	}
	var comp protocol.Compressor
	lz4Segments := false
	if name := strings.ToLower(opts["COMPRESSION"]); name != "" {
		if h.Version >= primitive.ProtocolVersion5 {
			if name != protocol.CompressionLZ4 {
				cn.replyError(h, fmt.Sprintf("Unsupported compression algorithm %s for protocol version %d: only lz4 is supported", name, h.Version))
				return gnet.None
			}
			lz4Segments = true
		} else if comp, err = protocol.NewCompressor(name); err != nil {
			cn.replyError(h, fmt.Sprintf("Unknown compression algorithm: %s", name))
			return gnet.None
		}
	}
	if err := cn.startupExtensions(opts); err != nil {
		cn.replyError(h, err.Error())
		return gnet.None
	}
	cn.version = h.Version
	// As Cassandra: "1" and nothing else asks for OVERLOADED.
	cn.throwOnOverload = opts["THROW_ON_OVERLOAD"] == "1"
	cn.hello.Store(&startupInfo{version: int(h.Version), driverName: opts["DRIVER_NAME"], driverVersion: opts["DRIVER_VERSION"]})
	if a := cn.s.opts.Authenticator; a != nil {
		cn.reply(h, &message.Authenticate{Authenticator: a.ClassName()})
		cn.s.okRequests[h.OpCode].Inc()
		cn.state = stateAuth
	} else {
		cn.reply(h, &message.Ready{})
		cn.s.okRequests[h.OpCode].Inc()
		cn.state = stateReady
		cn.ready.Store(true)
	}
	compName := strings.ToLower(opts["COMPRESSION"])
	if compName == "" {
		compName = "none"
	}
	cn.s.m.Startups.WithLabelValues(strconv.Itoa(int(h.Version)), compName).Inc()
	cn.comp = comp
	if h.Version >= primitive.ProtocolVersion5 {
		cn.framed = true
		cn.segLZ4 = lz4Segments
		cn.segDec = protocol.NewSegmentDecoder(lz4Segments, protocol.HeaderLen+cn.s.opts.MaxFrameSize)
	}
	return gnet.None
}

// register records the event types the connection wants pushed.
func (cn *conn) register(h protocol.Header, body []byte) gnet.Action {
	if cn.state != stateReady {
		cn.replyError(h, cn.unexpected(h.OpCode))
		return gnet.None
	}
	req, err := protocol.DecodeRequest(h, body, cn.comp, cn.s.opts.MaxFrameSize)
	if err != nil {
		cn.replyError(h, err.Error())
		return gnet.None
	}
	var bits uint32
	for _, t := range req.Message.(*message.Register).EventTypes {
		b := eventBit(t)
		if b == 0 {
			cn.replyError(h, fmt.Sprintf("Invalid value '%s' for Type", t))
			return gnet.None
		}
		bits |= b
	}
	cn.events.Or(bits)
	cn.reply(h, &message.Ready{})
	cn.s.okRequests[h.OpCode].Inc()
	return gnet.None
}

var opNames = map[primitive.OpCode]string{
	primitive.OpCodeStartup:      "STARTUP",
	primitive.OpCodeOptions:      "OPTIONS",
	primitive.OpCodeQuery:        "QUERY",
	primitive.OpCodePrepare:      "PREPARE",
	primitive.OpCodeExecute:      "EXECUTE",
	primitive.OpCodeRegister:     "REGISTER",
	primitive.OpCodeBatch:        "BATCH",
	primitive.OpCodeAuthResponse: "AUTH_RESPONSE",
	protocol.OpCodePrepareBatch:  "PREPARE_BATCH",
}

func opName(op primitive.OpCode) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "UNKNOWN"
}

var errorNames = map[primitive.ErrorCode]string{
	primitive.ErrorCodeServerError:         "server_error",
	primitive.ErrorCodeProtocolError:       "protocol_error",
	primitive.ErrorCodeAuthenticationError: "bad_credentials",
	primitive.ErrorCodeUnavailable:         "unavailable",
	primitive.ErrorCodeOverloaded:          "overloaded",
	primitive.ErrorCodeIsBootstrapping:     "is_bootstrapping",
	primitive.ErrorCodeTruncateError:       "truncate_error",
	primitive.ErrorCodeWriteTimeout:        "write_timeout",
	primitive.ErrorCodeReadTimeout:         "read_timeout",
	primitive.ErrorCodeReadFailure:         "read_failure",
	primitive.ErrorCodeFunctionFailure:     "function_failure",
	primitive.ErrorCodeWriteFailure:        "write_failure",
	primitive.ErrorCodeSyntaxError:         "syntax_error",
	primitive.ErrorCodeUnauthorized:        "unauthorized",
	primitive.ErrorCodeInvalid:             "invalid",
	primitive.ErrorCodeConfigError:         "config_error",
	primitive.ErrorCodeAlreadyExists:       "already_exists",
	primitive.ErrorCodeUnprepared:          "unprepared",
	protocol.ErrorCodeCasWriteUnknown:      "cas_write_unknown",
}

// outcome labels a response for the requests metric.
func outcome(m message.Message) string {
	e, ok := m.(message.Error)
	if !ok {
		return "ok"
	}
	if n, ok := errorNames[e.GetErrorCode()]; ok {
		return n
	}
	return "other_error"
}
