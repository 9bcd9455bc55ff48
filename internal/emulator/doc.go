// Package emulator starts Google's local emulators — the Pub/Sub emulator, the
// Datastore emulator and the Firestore emulator in Datastore mode — for tests and for
// the CLI demo.
//
// Each emulator runs as the Java process itself, not through gcloud's Python wrapper,
// so [Emulator.Stop] ends it by its own process id: it runs in its own process group
// and, on Linux, is SIGKILLed by the kernel when the process that started it dies (see
// internal/childproc). It listens on a free loopback port, its output goes to a log
// file in [Options.Dir], and Start returns once it answers its health check (an HTTP
// GET of / that answers 200 "Ok").
//
// The command lines are those `gcloud beta emulators pubsub start`, `gcloud beta
// emulators datastore start` and `gcloud emulators firestore start
// --database-mode=datastore-mode` run (Cloud SDK 528's
// lib/googlecloudsdk/command_lib/emulators/{pubsub,datastore,firestore}_util.py and
// the platform/ launcher scripts they exec):
//
//	java -jar <sdk>/platform/pubsub-emulator/lib/cloud-pubsub-emulator-<v>-all.jar --host=127.0.0.1 --port=P
//	java -cp <sdk>/platform/cloud-datastore-emulator/CloudDatastore.jar com.google.cloud.datastore.emulator.CloudDatastore start --testing --host=127.0.0.1 --port=P --store_on_disk=false --consistency=1.0
//	java -Duser.language=en -cp <sdk>/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar com.google.cloud.datastore.emulator.firestore.CloudFirestore start --host=127.0.0.1 --port=P --database-mode=datastore-mode
//
// StartDatastoreFirestoreMode runs the same Datastore command with
// --firestore_in_datastore_mode in place of --consistency=1.0, as `gcloud beta
// emulators datastore start --use-firestore-in-datastore-mode` does.
//
// For the Datastore emulator, --testing replaces gcloud's `create` step (it needs no
// project directory) and implies the in-memory store and consistency 1.0 that
// `gcloud beta emulators datastore start --no-store-on-disk --consistency=1.0` asks
// for; both are also passed explicitly.
//
// The Cloud SDK is found through [Options.SDKRoot], else the gcloud on PATH (its
// <root>/bin/gcloud, following symlinks, or `gcloud info
// --format=value(installation.sdk_root)`), else /usr/lib/google-cloud-sdk, the root
// of the Debian packages. Java is $JAVA, else $JAVA_HOME/bin/java, else java on PATH.
// When an emulator or Java is missing the error wraps [ErrNotInstalled] and names
// the Debian package to install. On Windows every Start fails with
// [ErrUnsupportedOS] before looking for either.
package emulator
