package synctest

import "kassa.dev/hub/hubnode"

var hubRun = hubnode.Run
