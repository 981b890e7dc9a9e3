# The benchmark's requests (A2A v1.0), sourced by run.sh and common.sh so that every tool sends
# the same ones.
MESSAGE='{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hello"}]}'
SEND_BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'$MESSAGE'}}'
STREAM_BODY='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":'$MESSAGE'}}'
# Also the gRPC SendMessageRequest, in ProtoJSON (loadgen sends it as protobuf).
REST_BODY='{"message":'$MESSAGE'}'
# The conformance agent keeps a task whose first message is `tck-cancel` WORKING until canceled.
IDLE_BODY='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"idle-{{seq}}","parts":[{"text":"tck-cancel"}]}}}'
# The same send from a v0.3 client (`message/send`), waiting for the result as v1.0's does.
V03_SEND_BODY='{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hello"}]},"configuration":{"blocking":true}}}'
# The same message as an MCP tool call (agentwire's `send_message` tool, MCP 2026-07-28, which
# needs no session): the agent `echo` behind a gateway.
MCP_META='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
MCP_CALL_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"agent":"echo","message":"hello"},"_meta":'$MCP_META'}}'
