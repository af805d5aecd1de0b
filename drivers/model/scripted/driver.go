package scripted

import "github.com/sms-baseline/sms/contracts"

// Driver describes the scripted provider to a driver registry: it replays
// the script file named by the script setting and takes no key.
var Driver = contracts.ModelDriver{
	DriverInfo: contracts.DriverInfo{Name: "scripted", Help: "replays a JSON script of turns, for demos and tests"},
	Needs:      []contracts.ModelNeed{{Setting: contracts.ModelScript, Hint: "FILE"}},
	Open:       open,
}

func open(s contracts.ModelSettings) (contracts.ModelService, error) {
	m, err := Load(s.Script)
	if err != nil {
		return nil, &contracts.SettingError{Setting: contracts.ModelScript, Err: err}
	}
	return m, nil
}
