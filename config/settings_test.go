package config

import "testing"

func TestSettings(t *testing.T) {
	c := Default()
	c.ClientEncryptionOptions.Enabled = true
	c.ClientEncryptionOptions.KeystorePassword = "s3cret"
	c.DataFileDirectories = []string{"/a", "/b"}
	got, err := c.Settings()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*string{}
	for _, s := range got {
		byName[s.Name] = s.Value
	}
	for name, want := range map[string]string{
		"cluster_name":                                "Test Cluster",
		"native_transport_port":                       "9042",
		"data_file_directories":                       "[/a, /b]",
		"client_encryption_options_enabled":           "true",
		"client_encryption_options_keystore_password": masked,
		"seed_provider_class_name":                    "org.apache.cassandra.locator.SimpleSeedProvider",
	} {
		if v, ok := byName[name]; !ok || v == nil || *v != want {
			t.Errorf("%s = %v, want %q", name, v, want)
		}
	}
	for _, s := range got {
		if s.Value != nil && *s.Value == "s3cret" {
			t.Errorf("%s shows a password", s.Name)
		}
	}
}
