package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

const scramIterations = 4096

var errAuth = errors.New("authentication failed")

// scramAuth runs the server side of SCRAM-SHA-256 (RFC 5802/7677, without
// channel binding) over pgproto3's SASL messages.
func (c *conn) scramAuth(password string) error {
	be := c.be
	be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := be.Flush(); err != nil {
		return err
	}
	// Each authentication message is bounded by maxAuthMessageLen before
	// its body is read (backend.auth), as PostgreSQL's
	// PG_MAX_AUTH_TOKEN_LENGTH: no allocation beyond 64 KiB before the
	// password is checked.
	init := &pgproto3.SASLInitialResponse{}
	if err := be.receiveAuth(init, "SASL"); err != nil {
		return err
	}
	if init.AuthMechanism != "SCRAM-SHA-256" {
		return errAuth
	}
	clientFirst := string(init.Data)
	// gs2-header: "n,," or "y,," (no channel binding), then the bare message
	var bare string
	switch {
	case strings.HasPrefix(clientFirst, "n,,"), strings.HasPrefix(clientFirst, "y,,"):
		bare = clientFirst[3:]
	default:
		return errAuth
	}
	var cnonce string
	for _, attr := range strings.Split(bare, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			cnonce = v
		}
	}
	if cnonce == "" {
		return errAuth
	}
	var nb, salt [18]byte
	_, _ = rand.Read(nb[:])
	_, _ = rand.Read(salt[:])
	nonce := cnonce + base64.RawStdEncoding.EncodeToString(nb[:])
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(salt[:]), scramIterations)
	be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := be.Flush(); err != nil {
		return err
	}
	resp := &pgproto3.SASLResponse{}
	if err := be.receiveAuth(resp, "SASL"); err != nil {
		return err
	}
	clientFinal := string(resp.Data)
	i := strings.LastIndex(clientFinal, ",p=")
	if i < 0 {
		return errAuth
	}
	withoutProof, proofB64 := clientFinal[:i], clientFinal[i+3:]
	gotNonce := ""
	for _, attr := range strings.Split(withoutProof, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			gotNonce = v
		}
	}
	if gotNonce != nonce {
		return errAuth
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != sha256.Size {
		return errAuth
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt[:], scramIterations, sha256.Size)
	if err != nil {
		return err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	authMessage := bare + "," + serverFirst + "," + withoutProof
	clientSig := hmacSHA256(storedKey[:], authMessage)
	recovered := make([]byte, len(proof))
	for j := range proof {
		recovered[j] = proof[j] ^ clientSig[j]
	}
	check := sha256.Sum256(recovered)
	if subtle.ConstantTimeCompare(check[:], storedKey[:]) != 1 {
		return errAuth
	}
	serverSig := hmacSHA256(hmacSHA256(salted, "Server Key"), authMessage)
	be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	return nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
