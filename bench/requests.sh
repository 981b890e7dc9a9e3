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
